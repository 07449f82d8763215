import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { answerAnthropic } from "./agent-turn.js";
import {
  neverAnswer,
  sleep,
  sse,
  startFakeServer,
  type FakeServer,
  type RecordedRequest,
} from "./fake-server.js";

/**
 * A fake Anthropic Messages upstream (POST /v1/messages), following Anthropic's documented wire
 * format: it checks `x-api-key` and `anthropic-version`, refuses what the real API refuses
 * (no max_tokens, a system role inside messages, roles other than user/assistant, tool_result
 * outside a user turn, an empty or blank text block in system or messages, a tool whose
 * input_schema is not `type: "object"`) with `{"type":"error","error":{type,message}}`, answers `message`
 * objects, and streams named events: message_start, content_block_start/delta/stop, ping,
 * message_delta (cumulative usage), message_stop, error. The requested model picks the behaviour:
 *
 * - `ok`: "Hello there, friend." (streamed in 3 text deltas); usage: input 10, cache read 3,
 *   cache creation 2, output 6
 * - `tools`: a text block, then tool_use get_weather {"city":"Paris"} (input_json_delta in 2 parts)
 * - `tool-no-args`: tool_use get_time with input {} (streamed, as the API does, as one empty
 *   input_json_delta)
 * - `thinking`: a thinking block, then text; usage as `ok`, 4 of the output tokens thinking
 *   (`output_tokens_details.thinking_tokens`; streamed, in message_delta)
 * - `thinking-tools`: a thinking block (signature "sig-tools"), a redacted_thinking block (data
 *   "enc-1"), then tool_use get_weather, stop_reason tool_use: the first turn of a tool loop with
 *   extended thinking
 * - `max-tokens`: stops with stop_reason max_tokens
 * - `slow-headers`: answers after 400 ms; `error-500` (api_error); `overloaded` (529);
 *   `rate-limited` (429, retry-after: 3)
 * - `bad-json`: a truncated body / an event whose data is not JSON
 * - `reset`: the connection is destroyed (stream: after one text delta)
 * - `never-ends`: message_start, one delta, then pings forever
 * - `no-first-byte`: never answers (no headers)
 * - `no-usage`: no usage anywhere
 * - `delta-usage-null`: as `ok`, but message_delta's usage has input_tokens and the cache counts
 *   null (MessageDeltaUsage types them `number | null`)
 * - `stream-error`: message_start then an overloaded_error event; `stream-error-late`: after a delta
 * - `agent`: a scripted tool-using turn for coding agents (agent-turn.ts)
 */
export const FAKE_ANTHROPIC_KEY = "sk-ant-fake";
export const OK_TEXT = ["Hello", " there,", " friend."];
const USAGE = {
  input_tokens: 10,
  cache_creation_input_tokens: 2,
  cache_read_input_tokens: 3,
  output_tokens: 6,
};

function error(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ type: "error", error: { type, message } }));
}

/** The checks the real API makes that the translation must satisfy; null when the body is valid. */
function invalidBody(body: any): string | null {
  if (typeof body !== "object" || body === null) return "body: not JSON";
  if (typeof body.model !== "string") return "model: Field required";
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return "max_tokens: Field required";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: Field required";
  for (const [i, m] of body.messages.entries()) {
    if (m.role !== "user" && m.role !== "assistant")
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (Array.isArray(m.content)) {
      for (const b of m.content) {
        if (b.type === "text" && (typeof b.text !== "string" || b.text.trim() === ""))
          return "messages: text content blocks must contain non-whitespace text";
        if (b.type === "tool_result" && m.role !== "user")
          return `messages.${i}: tool_result blocks belong in user turns`;
        if (b.type === "tool_use" && (typeof b.input !== "object" || b.input === null))
          return `messages.${i}: tool_use.input must be an object`;
        if (b.type === "thinking" && (typeof b.thinking !== "string" || typeof b.signature !== "string"))
          return `messages.${i}: thinking blocks need thinking and signature`;
        if (b.type === "redacted_thinking" && typeof b.data !== "string")
          return `messages.${i}: redacted_thinking blocks need data`;
      }
    }
  }
  // With thinking on, a tool loop's last assistant turn must start with its thinking (the API
  // says: "Expected `thinking` or `redacted_thinking`, but found `tool_use`").
  const last = body.messages.at(-1);
  const isToolResults = (m: any): boolean =>
    m?.role === "user" &&
    Array.isArray(m.content) &&
    (m.content as { type?: unknown }[]).some((b) => b.type === "tool_result");
  if (body.thinking?.type === "enabled" && isToolResults(last)) {
    const i = body.messages.length - 2;
    const first = Array.isArray(body.messages[i]?.content) ? body.messages[i].content[0]?.type : "text";
    if (first !== "thinking" && first !== "redacted_thinking")
      return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block`;
  }
  // A tool's input_schema must say `type: "object"` (the API's Tool.InputSchema).
  for (const [i, t] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    if (t?.input_schema?.type !== "object") return `tools.${i}.custom.input_schema.type: Field required`;
  }
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system))
    return "system: must be a string or text blocks";
  if (Array.isArray(body.system) && body.system.some((b: any) => String(b?.text ?? "").trim() === ""))
    return "system: text content blocks must contain non-whitespace text";
  if (body.temperature !== undefined && !(body.temperature >= 0 && body.temperature <= 1))
    return "temperature: Input should be less than or equal to 1";
  if (body.thinking?.type === "enabled") {
    if (body.temperature !== undefined && body.temperature !== 1)
      return "`temperature` may only be set to 1 when thinking is enabled";
    if (body.top_k !== undefined) return "`top_k` is not supported when thinking is enabled";
    if (body.top_p !== undefined && body.top_p < 0.95)
      return "`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled";
    if (body.tool_choice?.type === "any" || body.tool_choice?.type === "tool")
      return "Thinking may not be enabled when tool_choice forces tool use.";
    const budget = body.thinking.budget_tokens;
    if (!Number.isInteger(budget) || budget < 1024)
      return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (budget >= body.max_tokens) return "`max_tokens` must be greater than `thinking.budget_tokens`";
  }
  return null;
}

function message(model: string, content: unknown[], stop: string, usage: unknown): unknown {
  return {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    ...(usage ? { usage } : {}),
  };
}

function blocksFor(model: string): { content: unknown[]; stop: string } {
  if (model === "tools") {
    return {
      content: [
        { type: "text", text: "Let me check." },
        { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } },
      ],
      stop: "tool_use",
    };
  }
  if (model === "tool-no-args") {
    return {
      content: [{ type: "tool_use", id: "toolu_02", name: "get_time", input: {} }],
      stop: "tool_use",
    };
  }
  if (model === "thinking-tools") {
    return {
      content: [
        { type: "thinking", thinking: "I need the weather.", signature: "sig-tools" },
        { type: "redacted_thinking", data: "enc-1" },
        { type: "tool_use", id: "toolu_03", name: "get_weather", input: { city: "Paris" } },
      ],
      stop: "tool_use",
    };
  }
  if (model === "thinking") {
    return {
      content: [
        { type: "thinking", thinking: "The user greets.", signature: "sig" },
        { type: "text", text: OK_TEXT.join("") },
      ],
      stop: "end_turn",
    };
  }
  return {
    content: [{ type: "text", text: OK_TEXT.join("") }],
    stop: model === "max-tokens" ? "max_tokens" : "end_turn",
  };
}

async function handle(req: RecordedRequest, res: ServerResponse, socket: Socket): Promise<void> {
  if (req.path !== "/v1/messages") return error(res, 404, "not_found_error", "Not found");
  if (req.headers["x-api-key"] !== FAKE_ANTHROPIC_KEY)
    return error(res, 401, "authentication_error", "invalid x-api-key");
  if (req.headers["anthropic-version"] !== "2023-06-01")
    return error(res, 400, "invalid_request_error", "anthropic-version: header is required");
  const invalid = invalidBody(req.body);
  if (invalid) return error(res, 400, "invalid_request_error", invalid);
  const model = String(req.body.model);
  if (model === "agent") return answerAnthropic(res, req.body);
  const stream = req.body.stream === true;
  const usage =
    model === "no-usage"
      ? null
      : model === "thinking"
        ? { ...USAGE, output_tokens_details: { thinking_tokens: 4 } }
        : USAGE;

  if (model === "slow-headers") await sleep(400);
  if (model === "no-first-byte") return neverAnswer(res);
  if (model === "error-500") return error(res, 500, "api_error", "Internal server error");
  if (model === "overloaded") return error(res, 529, "overloaded_error", "Overloaded");
  if (model === "rate-limited")
    return error(res, 429, "rate_limit_error", "Number of requests has exceeded your rate limit", {
      "retry-after": "3",
    });
  if (model === "reset" && !stream) return void socket.destroy();

  const { content, stop } = blocksFor(model);
  if (!stream) {
    if (model === "bad-json") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end('{"id":"msg_fake","content":[');
    }
    return void res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify(message(model, content, stop, usage)));
  }

  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.flushHeaders();
  if (model === "bad-json") return void res.end("event: message_start\ndata: {not json\n\n");
  // message_start counts the prompt; the output so far is one token, none of it thinking.
  const start = message(
    model,
    [],
    null as unknown as string,
    usage ? { ...usage, output_tokens: 1, output_tokens_details: null } : null,
  );
  sse(res, { type: "message_start", message: start }, "message_start");
  if (model === "stream-error") {
    sse(res, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "error");
    return void res.end();
  }
  sse(res, { type: "ping" }, "ping");
  let index = 0;
  for (const block of content as any[]) {
    if (block.type === "text") {
      sse(
        res,
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
        "content_block_start",
      );
      const parts = block.text === OK_TEXT.join("") ? OK_TEXT : [block.text];
      for (const [i, text] of parts.entries()) {
        sse(
          res,
          { type: "content_block_delta", index, delta: { type: "text_delta", text } },
          "content_block_delta",
        );
        if (i === 0 && model === "reset") return void setTimeout(() => socket.destroy(), 20);
        if (i === 0 && model === "never-ends") {
          const t = setInterval(() => sse(res, { type: "ping" }, "ping"), 50);
          return void res.on("close", () => clearInterval(t));
        }
        if (i === 0 && model === "stream-error-late") {
          sse(res, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "error");
          return void res.end();
        }
      }
    } else if (block.type === "redacted_thinking") {
      sse(res, { type: "content_block_start", index, content_block: block }, "content_block_start");
    } else if (block.type === "thinking") {
      sse(
        res,
        { type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } },
        "content_block_start",
      );
      sse(
        res,
        { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } },
        "content_block_delta",
      );
      sse(
        res,
        {
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: block.signature },
        },
        "content_block_delta",
      );
    } else if (block.type === "tool_use") {
      sse(
        res,
        {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        },
        "content_block_start",
      );
      const pieces = Object.keys(block.input).length === 0 ? [""] : ['{"city":', ' "Paris"}'];
      for (const partial_json of pieces) {
        sse(
          res,
          { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } },
          "content_block_delta",
        );
      }
    }
    sse(res, { type: "content_block_stop", index }, "content_block_stop");
    index++;
  }
  sse(
    res,
    {
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      ...(usage
        ? {
            usage:
              model === "delta-usage-null"
                ? {
                    input_tokens: null,
                    cache_creation_input_tokens: null,
                    cache_read_input_tokens: null,
                    output_tokens: usage.output_tokens,
                  }
                : {
                    output_tokens: usage.output_tokens,
                    ...("output_tokens_details" in usage
                      ? { output_tokens_details: usage.output_tokens_details }
                      : {}),
                  },
          }
        : {}),
    },
    "message_delta",
  );
  sse(res, { type: "message_stop" }, "message_stop");
  res.end();
}

export function startFakeAnthropic(): Promise<FakeServer> {
  return startFakeServer(handle);
}
