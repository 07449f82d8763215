import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../../src/domain/errors.js";
import { ANTHROPIC_REASONING_FORMAT } from "../../../src/gateway/providers/anthropic/anthropic-request.js";
import { toAnthropicRequest } from "../../../src/gateway/providers/anthropic/anthropic-request.js";
import { messagesToChat } from "../../../src/gateway/surfaces/messages/messages-request.js";

/**
 * The Messages request translation (src/gateway/surfaces/messages/messages-request.ts): each rule
 * as a row, each malformed body as a row naming the field of its 400, and the two recorded Claude
 * Code turns.
 */
const base = { model: "anthropic/claude", max_tokens: 100, messages: [{ role: "user", content: "hi" }] };
const user = (content: unknown) => ({ messages: [{ role: "user", content }] });
const F = ANTHROPIC_REASONING_FORMAT;

interface Row {
  name: string;
  body: Record<string, unknown>;
  /** What the chat body must contain (toMatchObject), or a check of it. */
  chat: Record<string, unknown> | ((chat: Record<string, unknown>) => void);
  leftOut?: string[];
}

const rows: Row[] = [
  {
    name: "model, max_tokens, stream and a string user turn",
    body: { stream: true },
    chat: {
      model: "anthropic/claude",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    },
    leftOut: [],
  },
  {
    name: "system as a string is the first system message",
    body: { system: "Be brief." },
    chat: {
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
      ],
    },
  },
  {
    name: "system text blocks are joined by a line break; their cache_control is left out",
    body: {
      system: [
        { type: "text", text: "A" },
        { type: "text", text: "B", cache_control: { type: "ephemeral" } },
      ],
    },
    chat: {
      messages: [
        { role: "system", content: "A\nB" },
        { role: "user", content: "hi" },
      ],
    },
    leftOut: ["cache_control"],
  },
  {
    name: "a blank system is no message",
    body: { system: "  " },
    chat: { messages: [{ role: "user", content: "hi" }] },
  },
  {
    name: "a role: system message stays a system message where it is",
    body: {
      messages: [
        { role: "user", content: "hi" },
        {
          role: "system",
          content: [
            { type: "text", text: "x" },
            { type: "text", text: "y" },
          ],
        },
      ],
    },
    chat: {
      messages: [
        { role: "user", content: "hi" },
        { role: "system", content: "x\ny" },
      ],
    },
  },
  {
    name: "text and images (base64 and url) become content parts",
    body: user([
      { type: "text", text: "look" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
      { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
    ]),
    chat: {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } },
            { type: "image_url", image_url: { url: "https://example.com/a.jpg" } },
          ],
        },
      ],
    },
  },
  {
    name: "tool_use → assistant tool_calls (arguments: the input's JSON); text joined; content null with calls only",
    body: {
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me " },
            { type: "text", text: "check." },
            { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls", n: [1] } },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_2", name: "Read", input: {} }] },
      ],
    },
    chat: {
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: "Let me check.",
          tool_calls: [
            {
              id: "toolu_1",
              type: "function",
              function: { name: "Bash", arguments: '{"command":"ls","n":[1]}' },
            },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "toolu_2", type: "function", function: { name: "Read", arguments: "{}" } }],
        },
      ],
    },
  },
  {
    name: "tool_result → tool messages (string, text blocks, is_error), ahead of the turn's other blocks",
    body: user([
      { type: "text", text: "and then?" },
      { type: "tool_result", tool_use_id: "toolu_1", content: "ok", is_error: false },
      {
        type: "tool_result",
        tool_use_id: "toolu_2",
        content: [
          { type: "text", text: "no such file" },
          { type: "text", text: "exit 1" },
        ],
        is_error: true,
      },
      { type: "tool_result", tool_use_id: "toolu_3" },
    ]),
    chat: {
      messages: [
        { role: "tool", tool_call_id: "toolu_1", content: "ok" },
        { role: "tool", tool_call_id: "toolu_2", content: "Error: no such file\nexit 1" },
        { role: "tool", tool_call_id: "toolu_3", content: "" },
        { role: "user", content: [{ type: "text", text: "and then?" }] },
      ],
    },
  },
  {
    name: "thinking and redacted_thinking → reasoning_details in the Anthropic adapter's format",
    body: {
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm", signature: "sig-1" },
            { type: "redacted_thinking", data: "ENC" },
            { type: "thinking", thinking: "unsigned", signature: "" },
            { type: "text", text: "a" },
          ],
        },
      ],
    },
    chat: {
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: "a",
          reasoning_details: [
            { type: "reasoning.text", text: "hmm", signature: "sig-1", format: F, index: 0 },
            { type: "reasoning.encrypted", data: "ENC", format: F, index: 1 },
            { type: "reasoning.text", text: "unsigned", format: F, index: 2 },
          ],
        },
      ],
    },
  },
  {
    name: "tools → function tools; strict carried; cache_control and defer_loading left out",
    body: {
      tools: [
        {
          name: "Bash",
          description: "run",
          input_schema: { type: "object", properties: { c: { type: "string" } } },
          strict: true,
          cache_control: { type: "ephemeral" },
        },
        { type: "custom", name: "Later", input_schema: { type: "object" }, defer_loading: true },
      ],
    },
    chat: {
      tools: [
        {
          type: "function",
          function: {
            name: "Bash",
            description: "run",
            parameters: { type: "object", properties: { c: { type: "string" } } },
            strict: true,
          },
        },
        { type: "function", function: { name: "Later", parameters: { type: "object" } } },
      ],
    },
    leftOut: ["cache_control", "tools.defer_loading"],
  },
  {
    name: "hosted tools (dated types, openrouter:*) are left out and named",
    body: {
      tools: [
        { type: "web_search_20250305", name: "web_search", max_uses: 3 },
        { type: "openrouter:web_search" },
        { name: "f", input_schema: { type: "object" } },
      ],
    },
    chat: (c) => expect((c.tools as unknown[]).length).toBe(1),
    leftOut: ["tools[web_search_20250305]", "tools[openrouter:web_search]"],
  },
  ...(
    [
      [{ type: "auto" }, "auto", undefined],
      [{ type: "any" }, "required", undefined],
      [{ type: "none" }, "none", undefined],
      [{ type: "tool", name: "f" }, { type: "function", function: { name: "f" } }, undefined],
      [{ type: "auto", disable_parallel_tool_use: true }, "auto", false],
      [{ type: "any", disable_parallel_tool_use: false }, "required", undefined],
    ] as const
  ).map(([choice, expected, parallel]): Row => ({
    name: `tool_choice ${JSON.stringify(choice)}`,
    body: { tools: [{ name: "f", input_schema: { type: "object" } }], tool_choice: choice },
    chat: (c) => {
      expect(c.tool_choice).toEqual(expected);
      expect(c.parallel_tool_calls).toBe(parallel);
    },
    leftOut: [],
  })),
  {
    name: "a tool_choice forcing a hosted tool is left out with it",
    body: {
      tools: [{ type: "web_search_20250305", name: "web_search" }],
      tool_choice: { type: "tool", name: "web_search" },
    },
    chat: (c) => {
      expect(c.tools).toBeUndefined();
      expect(c.tool_choice).toBeUndefined();
    },
    leftOut: ["tools[web_search_20250305]", "tool_choice"],
  },
  {
    name: "thinking enabled → reasoning.max_tokens (the budget)",
    body: { thinking: { type: "enabled", budget_tokens: 2048 } },
    chat: { reasoning: { max_tokens: 2048 } },
  },
  {
    name: "thinking adaptive → reasoning enabled; display left out",
    body: { thinking: { type: "adaptive", display: "omitted" } },
    chat: { reasoning: { enabled: true } },
    leftOut: ["thinking.display"],
  },
  {
    name: "thinking disabled → no reasoning",
    body: { thinking: { type: "disabled" } },
    chat: (c) => expect("reasoning" in c).toBe(false),
  },
  {
    name: "stop_sequences, temperature, top_p, top_k",
    body: { stop_sequences: ["END", "\n\nHuman:"], temperature: 0.2, top_p: 0.9, top_k: 40 },
    chat: { stop: ["END", "\n\nHuman:"], temperature: 0.2, top_p: 0.9, top_k: 40 },
  },
  {
    name: "metadata.user_id → user; other metadata left out",
    body: { metadata: { user_id: "u-1", tag: "x" } },
    chat: { user: "u-1" },
    leftOut: ["metadata.tag"],
  },
  {
    name: "the router's user wins over metadata.user_id",
    body: { metadata: { user_id: "u-1" }, user: "u-2" },
    chat: { user: "u-2" },
  },
  {
    name: "router extras: models, provider, session_id, trace",
    body: {
      models: ["a/b", "c/d"],
      provider: { order: ["anthropic"], allow_fallbacks: false, sort: "price" },
      session_id: "s-1",
      trace: { trace_id: "t" },
    },
    chat: {
      models: ["a/b", "c/d"],
      provider: { order: ["anthropic"], allow_fallbacks: false, sort: "price" },
      session_id: "s-1",
      trace: { trace_id: "t" },
    },
    leftOut: [],
  },
  {
    name: "fallbacks [{model}] → models",
    body: { fallbacks: [{ model: "x/y" }, { model: "z/w" }] },
    chat: { models: ["x/y", "z/w"] },
  },
  {
    name: "fields no chat provider carries are left out, each named once; nulls are not",
    body: {
      cache_control: { type: "ephemeral" },
      context_management: { edits: [] },
      output_config: { effort: "high" },
      container: "c-1",
      service_tier: "auto",
      speed: "fast",
      betas: ["x"],
      inference_geo: null,
      messages: [
        { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] },
      ],
    },
    chat: { messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
    leftOut: [
      "cache_control",
      "context_management",
      "output_config",
      "container",
      "service_tier",
      "speed",
      "betas",
    ],
  },
  {
    name: "fields of blocks the chat shape has no place for are named by block type",
    body: user([
      { type: "text", text: "t", citations: [{ type: "char_location" }] },
      { type: "image", source: { type: "url", url: "http://h/i.png" }, transformations: { x: 1 } },
      { type: "tool_result", tool_use_id: "t1", content: "r", toolset_name: "set" },
    ]),
    chat: (c) => expect((c.messages as unknown[]).length).toBe(2),
    leftOut: ["tool_result.toolset_name", "text.citations", "image.transformations"].sort(),
  },
];

describe("messagesToChat: translation rules", () => {
  for (const row of rows) {
    it(row.name, () => {
      const { chat, leftOut } = messagesToChat({ ...base, ...row.body });
      if (typeof row.chat === "function") row.chat(chat);
      else expect(chat).toMatchObject(row.chat);
      if (row.leftOut) expect([...leftOut].sort()).toEqual([...row.leftOut].sort());
    });
  }

  it("leaves out what it is not told, and copies nothing it does not translate", () => {
    const { chat } = messagesToChat({ ...base, context_management: { edits: [] }, output_config: {} });
    expect(Object.keys(chat).sort()).toEqual(["max_tokens", "messages", "model"]);
  });

  it("signed thinking survives a later hop to an Anthropic provider", () => {
    const { chat } = messagesToChat({
      ...base,
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "plan", signature: "SIG" },
            { type: "redacted_thinking", data: "ENC" },
            { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "done" }] },
      ],
      tools: [{ name: "f", input_schema: { type: "object" } }],
    });
    const upstream = toAnthropicRequest({ upstreamModel: "claude", body: chat, timeoutMs: 1000 }, false);
    expect(upstream.messages).toEqual([
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "plan", signature: "SIG" },
          { type: "redacted_thinking", data: "ENC" },
          { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "done" }] },
    ]);
  });
});

/** Malformed bodies: each is a 400 whose message starts with the field named. */
const malformed: [string, unknown, string][] = [
  ["not an object", [], "body:"],
  ["no model", { ...base, model: undefined }, "model:"],
  ["an empty model", { ...base, model: "" }, "model:"],
  ["no messages", { ...base, messages: undefined }, "messages:"],
  ["empty messages", { ...base, messages: [] }, "messages:"],
  ["max_tokens 0", { ...base, max_tokens: 0 }, "max_tokens:"],
  ["max_tokens 1.5", { ...base, max_tokens: 1.5 }, "max_tokens:"],
  ["max_tokens as text", { ...base, max_tokens: "100" }, "max_tokens:"],
  ["stream as text", { ...base, stream: "yes" }, "stream:"],
  ["temperature above 1", { ...base, temperature: 1.5 }, "temperature:"],
  ["top_p negative", { ...base, top_p: -0.1 }, "top_p:"],
  ["top_k fractional", { ...base, top_k: 2.5 }, "top_k:"],
  ["stop_sequences not strings", { ...base, stop_sequences: ["a", 1] }, "stop_sequences[1]:"],
  ["a message that is not an object", { ...base, messages: ["hi"] }, "messages[0]:"],
  ["an unknown role", { ...base, messages: [{ role: "tool", content: "x" }] }, "messages[0].role:"],
  ["content missing", { ...base, messages: [{ role: "user" }] }, "messages[0].content:"],
  ["content empty", { ...base, messages: [{ role: "user", content: [] }] }, "messages[0].content:"],
  ["a block without a type", { ...base, ...user([{ text: "x" }]) }, "messages[0].content[0].type:"],
  ["a text block without text", { ...base, ...user([{ type: "text" }]) }, "messages[0].content[0].text:"],
  [
    "a document block",
    {
      ...base,
      ...user([
        { type: "text", text: "x" },
        { type: "document", source: {} },
      ]),
    },
    "messages[0].content[1].type:",
  ],
  [
    "a search_result block",
    { ...base, ...user([{ type: "search_result" }]) },
    "messages[0].content[0].type:",
  ],
  [
    "a server_tool_use block",
    {
      ...base,
      messages: [{ role: "assistant", content: [{ type: "server_tool_use", id: "s", name: "web_search" }] }],
    },
    "messages[0].content[0].type:",
  ],
  [
    "a compaction block",
    { ...base, messages: [{ role: "assistant", content: [{ type: "compaction", content: "x" }] }] },
    "messages[0].content[0].type:",
  ],
  ["an unknown block type", { ...base, ...user([{ type: "hologram" }]) }, "messages[0].content[0].type:"],
  [
    "tool_use in a user turn",
    { ...base, ...user([{ type: "tool_use", id: "t", name: "f", input: {} }]) },
    "messages[0].content[0].type:",
  ],
  [
    "tool_result in an assistant turn",
    { ...base, messages: [{ role: "assistant", content: [{ type: "tool_result", tool_use_id: "t" }] }] },
    "messages[0].content[0].type:",
  ],
  [
    "an image in a system message",
    { ...base, messages: [{ role: "system", content: [{ type: "image", source: {} }] }] },
    "messages[0].content[0].type:",
  ],
  ["an image without source", { ...base, ...user([{ type: "image" }]) }, "messages[0].content[0].source:"],
  [
    "an image of an unknown media type",
    { ...base, ...user([{ type: "image", source: { type: "base64", media_type: "image/bmp", data: "x" } }]) },
    "messages[0].content[0].source.media_type:",
  ],
  [
    "an image from the Files API",
    { ...base, ...user([{ type: "image", source: { type: "file", file_id: "f" } }]) },
    "messages[0].content[0].source.type:",
  ],
  [
    "an image url that is not http(s)",
    { ...base, ...user([{ type: "image", source: { type: "url", url: "ftp://x" } }]) },
    "messages[0].content[0].source.url:",
  ],
  [
    "a tool_result without tool_use_id",
    { ...base, ...user([{ type: "tool_result", content: "x" }]) },
    "messages[0].content[0].tool_use_id:",
  ],
  [
    "an image inside a tool_result",
    {
      ...base,
      ...user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "image", source: {} }] }]),
    },
    "messages[0].content[0].content[0].type:",
  ],
  [
    "is_error not a boolean",
    { ...base, ...user([{ type: "tool_result", tool_use_id: "t", is_error: "yes" }]) },
    "messages[0].content[0].is_error:",
  ],
  [
    "tool_use input that is a list",
    {
      ...base,
      messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: [1] }] }],
    },
    "messages[0].content[0].input:",
  ],
  [
    "tool_use without name",
    { ...base, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", input: {} }] }] },
    "messages[0].content[0].name:",
  ],
  [
    "thinking without text",
    { ...base, messages: [{ role: "assistant", content: [{ type: "thinking", signature: "s" }] }] },
    "messages[0].content[0].thinking:",
  ],
  [
    "redacted_thinking without data",
    { ...base, messages: [{ role: "assistant", content: [{ type: "redacted_thinking" }] }] },
    "messages[0].content[0].data:",
  ],
  ["system as a number", { ...base, system: 3 }, "system:"],
  ["a system block that is an image", { ...base, system: [{ type: "image" }] }, "system[0].type:"],
  ["tools not a list", { ...base, tools: {} }, "tools:"],
  ["a tool without name", { ...base, tools: [{ input_schema: { type: "object" } }] }, "tools[0].name:"],
  ["a tool without input_schema", { ...base, tools: [{ name: "f" }] }, "tools[0].input_schema:"],
  ["a tool of an unknown type", { ...base, tools: [{ type: "function", name: "f" }] }, "tools[0].type:"],
  ["tool_choice of an unknown type", { ...base, tool_choice: { type: "required" } }, "tool_choice.type:"],
  [
    "tool_choice naming no tool",
    { ...base, tools: [{ name: "f", input_schema: {} }], tool_choice: { type: "tool", name: "g" } },
    "tool_choice.name:",
  ],
  ["thinking of an unknown type", { ...base, thinking: { type: "on" } }, "thinking.type:"],
  ["thinking enabled without budget", { ...base, thinking: { type: "enabled" } }, "thinking.budget_tokens:"],
  ["metadata.user_id a number", { ...base, metadata: { user_id: 7 } }, "metadata.user_id:"],
  ["models empty", { ...base, models: [] }, "models:"],
  ["models with fallbacks", { ...base, models: ["a"], fallbacks: [{ model: "b" }] }, "fallbacks:"],
  ["four fallbacks", { ...base, fallbacks: [1, 2, 3, 4].map((n) => ({ model: `m${n}` })) }, "fallbacks:"],
  ["provider.order not strings", { ...base, provider: { order: "anthropic" } }, "provider.order:"],
  [
    "provider.allow_fallbacks as text",
    { ...base, provider: { allow_fallbacks: "no" } },
    "provider.allow_fallbacks:",
  ],
  ["session_id too long", { ...base, session_id: "s".repeat(257) }, "session_id:"],
  ["user too long", { ...base, user: "u".repeat(1025) }, "user:"],
  ["trace not an object", { ...base, trace: "t" }, "trace:"],
];

describe("messagesToChat: malformed bodies are a 400 naming the field", () => {
  for (const [name, body, field] of malformed) {
    it(name, () => {
      let caught: unknown;
      try {
        messagesToChat(body);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(DomainError);
      const err = caught as DomainError;
      expect(err.status).toBe(400);
      expect(err.code).toBe("invalid_request");
      expect(err.message.startsWith(`${field} `)).toBe(true);
    });
  }
});

interface Recorded {
  turn: number;
  body: Record<string, unknown>;
}
const recorded = JSON.parse(
  readFileSync(new URL("./claude-code-2.1.328-messages.json", import.meta.url), "utf8"),
) as Recorded[];

describe("messagesToChat: Claude Code 2.1.328's recorded turns", () => {
  const [turn1, turn2] = recorded.map((r) => messagesToChat(r.body)) as [
    ReturnType<typeof messagesToChat>,
    ReturnType<typeof messagesToChat>,
  ];
  const sys = (recorded[0]!.body.system as { text: string }[]).map((b) => b.text).join("\n");

  it("turn 1: system blocks joined, the system-role message kept, 12 tools, thinking adaptive", () => {
    const { chat, leftOut } = turn1;
    expect(chat.model).toBe("anth/claude-test");
    expect(chat.stream).toBe(true);
    expect(chat.max_tokens).toBe(32000);
    expect(chat.reasoning).toEqual({ enabled: true });
    expect(chat.user).toBe("<150 characters>");
    expect(chat.messages).toEqual([
      { role: "system", content: sys },
      {
        role: "user",
        content: [
          { type: "text", text: "<555 characters>" },
          { type: "text", text: "<576 characters>" },
          { type: "text", text: "<8 characters>" },
        ],
      },
      { role: "system", content: "<9118 characters>" },
    ]);
    const tools = chat.tools as {
      type: string;
      function: { name: string; parameters: Record<string, unknown> };
    }[];
    expect(tools).toHaveLength(12);
    expect(tools.every((t) => t.type === "function" && t.function.parameters.type === "object")).toBe(true);
    expect(tools.map((t) => t.function.name)).toContain("Bash");
    for (const name of [
      "cache_control",
      "context_management",
      "output_config",
      "thinking.display",
      "tools.defer_loading",
    ])
      expect(leftOut).toContain(name);
    expect(chat.tool_choice).toBeUndefined();
  });

  it("turn 2: the tool_use is the assistant's call and the tool_result its answer, paired by id", () => {
    const { chat, leftOut } = turn2;
    const messages = chat.messages as Record<string, unknown>[];
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "system", "assistant", "tool"]);
    expect(messages[3]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "toolu_01",
          type: "function",
          function: {
            name: "Bash",
            arguments: JSON.stringify({ command: "echo hello-from-tool", description: "<16 characters>" }),
          },
        },
      ],
    });
    expect(messages[4]).toEqual({ role: "tool", tool_call_id: "toolu_01", content: "<15 characters>" });
    expect(leftOut).toEqual(expect.arrayContaining(["cache_control", "context_management", "output_config"]));
  });
});

describe("messagesToChat: leftOut is safe to put in a header", () => {
  it("names are cut to header-safe characters and 64 of them", () => {
    const { leftOut } = messagesToChat({ ...base, "bad\r\nx-injected: 1": true, ["é".repeat(100)]: 1 });
    expect(leftOut).toEqual(["bad__x-injected:_1", "_".repeat(64)]);
  });

  it("at most 32 names are listed, the rest counted", () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`extra_${i}`, i]));
    const { leftOut } = messagesToChat({ ...base, ...many, extra_0_again: undefined });
    expect(leftOut).toHaveLength(33);
    expect(leftOut.slice(0, 2)).toEqual(["extra_0", "extra_1"]);
    expect(leftOut.at(-1)).toBe("and 8 more");
  });
});
