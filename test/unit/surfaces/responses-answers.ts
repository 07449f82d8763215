import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { usageWire } from "../../../src/gateway/chat/wire.js";
import type { ProviderChunk } from "../../../src/gateway/providers/provider.js";
import { tokenCost } from "../../../src/gateway/reservations/token-cost.js";
import { responsesToChat } from "../../../src/gateway/surfaces/responses/responses-request.js";
import type { ChatCompletionAnswer } from "../../../src/gateway/surfaces/responses/responses-result.js";
import { ResponsesStreamEncoder } from "../../../src/gateway/surfaces/responses/responses-stream.js";

/**
 * Chat answers (whole and streamed) and a Responses request with a namespaced tool, shared by the
 * Responses surface's tests.
 */

/** The two requests Codex CLI 0.169.0 sent for one tool-using turn (prose replaced by its length). */
export const CODEX_TURNS = JSON.parse(
  readFileSync(resolve(import.meta.dirname, "codex-0.169.0-responses.json"), "utf8"),
) as { turn: number; body: Record<string, unknown> }[];

export const ID = "gen-1795773012453-EI7-2UtZb4uaH_fJTwU6wUIa";
export const MODEL = "local/tiny";
export const CREATED = 1_795_773_012;
export const COMPLETED = 1_795_773_015;

/** A request offering a flat function, a namespace of two, and a hosted tool. */
export const TOOLS_REQUEST = {
  model: MODEL,
  input: "List the agents",
  tools: [
    {
      type: "function",
      name: "exec_command",
      description: "Run a command",
      strict: false,
      parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
    },
    {
      type: "namespace",
      name: "multi_agent_v1",
      description: "Agents",
      tools: [
        {
          type: "function",
          name: "close_agent",
          description: "Close one",
          parameters: { type: "object", properties: { target: { type: "string" } } },
        },
        { type: "function", name: "list_agents", parameters: null },
      ],
    },
    { type: "web_search", external_web_access: false },
  ],
};

export const echoOf = (body: unknown = TOOLS_REQUEST) => responsesToChat(body).echo;

/** The chat usage of an answer (chat/wire.ts usageWire): 10 prompt tokens (2 cached), 5 completion (1 reasoning). */
const ANSWER_USAGE = {
  promptTokens: 10,
  completionTokens: 5,
  cachedTokens: 2,
  cacheWriteTokens: 0,
  reasoningTokens: 1,
};
export const USAGE = usageWire({
  usage: ANSWER_USAGE,
  cost: tokenCost({ promptPerMTokNano: 1_000_000_000n, completionPerMTokNano: 5_000_000_000n }, ANSWER_USAGE),
  costNano: 35_000n,
  byokCostNano: 0n,
  isByok: false,
});

const chunk = (
  delta: Record<string, unknown>,
  finish: string | null = null,
  logprobs?: Record<string, unknown>,
): ProviderChunk => ({
  upstreamId: "up-1",
  usage: null,
  choices: [{ index: 0, delta, finish_reason: finish, ...(logprobs ? { logprobs } : {}) }],
});

export const TEXT_CHUNKS: ProviderChunk[] = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "Hel" }),
  chunk({ content: "lo" }),
  chunk({}, "stop"),
];

const FORMAT = "anthropic-claude-v1";
/** Anthropic-style thinking: its text in two pieces, then its signature, then the answer. */
export const REASONING_CHUNKS: ProviderChunk[] = [
  chunk({
    reasoning: "Think",
    reasoning_details: [{ type: "reasoning.text", text: "Think", format: FORMAT, index: 0 }],
  }),
  chunk({
    reasoning: "ing",
    reasoning_details: [{ type: "reasoning.text", text: "ing", format: FORMAT, index: 0 }],
  }),
  chunk({ reasoning_details: [{ type: "reasoning.text", signature: "sig-1", format: FORMAT, index: 0 }] }),
  chunk({ content: "Answer" }),
  chunk({}, "stop"),
];

/** The reasoning_details REASONING_CHUNKS amount to. */
export const REASONING_DETAILS = [
  { type: "reasoning.text", text: "Thinking", format: FORMAT, index: 0, signature: "sig-1" },
];

/** A call of the namespaced close_agent, its arguments in two pieces. */
export const CALL_CHUNKS: ProviderChunk[] = [
  chunk({
    tool_calls: [
      {
        index: 0,
        id: "call_a",
        type: "function",
        function: { name: "multi_agent_v1__close_agent", arguments: "" },
      },
    ],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"target"' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: ':"x"}' } }] }),
  chunk({}, "tool_calls"),
];

/** The whole answers the chunk lists amount to, as chat/complete.ts answers them. */
export const completion = (
  message: ChatCompletionAnswer["choices"][number]["message"],
  finish = "stop",
): ChatCompletionAnswer => ({
  id: ID,
  model: MODEL,
  choices: [{ message, finish_reason: finish }],
  usage: USAGE,
});

export const TEXT_ANSWER = completion({ role: "assistant", content: "Hello" });
export const REASONING_ANSWER = completion({
  role: "assistant",
  content: "Answer",
  reasoning: "Thinking",
  reasoning_details: REASONING_DETAILS,
});
export const CALL_ANSWER = completion(
  {
    role: "assistant",
    content: null,
    tool_calls: [
      {
        id: "call_a",
        type: "function",
        function: { name: "multi_agent_v1__close_agent", arguments: '{"target":"x"}' },
      },
    ],
  },
  "tool_calls",
);

/** The whole event stream for `chunks`, ending as the data plane ends it (finish, then done). */
export function streamOf(
  chunks: ProviderChunk[],
  body: unknown = TOOLS_REQUEST,
  finish?: string | null,
): string {
  const enc = new ResponsesStreamEncoder({
    id: ID,
    model: MODEL,
    createdAt: CREATED,
    echo: echoOf(body),
    now: () => COMPLETED,
  });
  let out = enc.open();
  let reason: string | null = null;
  for (const c of chunks) {
    out += enc.chunk(c);
    reason = c.choices[0]?.finish_reason ?? reason;
  }
  return out + enc.finish(USAGE, finish === undefined ? reason : finish) + enc.done;
}

export interface Event {
  event: string;
  data: Record<string, unknown>;
}

/** An SSE text → its events (every one must have its `event:` line equal to its data's type). */
export function eventsOf(sse: string): Event[] {
  const out: Event[] = [];
  for (const block of sse.split("\n\n")) {
    if (block === "" || block === "data: [DONE]") continue;
    const lines = block.split("\n");
    const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "";
    const data = JSON.parse(lines.find((l) => l.startsWith("data: "))?.slice(6) ?? "null") as Record<
      string,
      unknown
    >;
    out.push({ event, data });
  }
  return out;
}
