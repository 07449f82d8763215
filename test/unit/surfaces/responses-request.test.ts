import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { ChatRequestBody } from "../../../src/http/schemas/chat.js";
import { DomainError } from "../../../src/domain/errors.js";
import { CARRY_PREFIX } from "../../../src/gateway/surfaces/responses/reasoning-carry.js";
import { responsesToChat } from "../../../src/gateway/surfaces/responses/responses-request.js";
import { CODEX_TURNS, TOOLS_REQUEST } from "./responses-answers.js";

/**
 * A Responses request → the gateway's chat request (src/gateway/surfaces/responses/): every rule
 * of docs/surfaces/responses.md "Request", "Input items" and "Tools", each refusal a 400 naming the
 * field, and the two requests Codex CLI sent for one tool-using turn.
 */

type Json = Record<string, unknown>;
const chatOf = (body: Json) => responsesToChat({ model: "m", ...body }).chat;

function refusal(body: unknown): string {
  try {
    responsesToChat(body);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).status).toBe(400);
    expect((err as DomainError).code).toBe("invalid_request");
    return (err as DomainError).message;
  }
  throw new Error("not refused");
}

describe("responsesToChat: input", () => {
  const cases: [string, Json, unknown[]][] = [
    ["a string is one user message", { input: "Hi" }, [{ role: "user", content: "Hi" }]],
    [
      "instructions lead as a system message",
      { instructions: "Be brief", input: "Hi" },
      [
        { role: "system", content: "Be brief" },
        { role: "user", content: "Hi" },
      ],
    ],
    [
      "messages keep their role; parts become chat parts",
      {
        input: [
          { role: "developer", content: [{ type: "input_text", text: "rules" }] },
          { type: "message", role: "system", content: "sys" },
          {
            role: "user",
            content: [
              { type: "input_text", text: "look" },
              { type: "input_image", detail: "original", image_url: "data:image/png;base64,AAAA" },
              { type: "input_image", detail: "low", image_url: "https://example.test/a.png" },
              { type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,JVBE" },
              { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
              { type: "input_video", video_url: "https://example.test/v.mp4" },
            ],
          },
        ],
      },
      [
        { role: "developer", content: [{ type: "text", text: "rules" }] },
        { role: "system", content: "sys" },
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "high" } },
            { type: "image_url", image_url: { url: "https://example.test/a.png", detail: "low" } },
            { type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" } },
            { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
            { type: "video_url", video_url: { url: "https://example.test/v.mp4" } },
          ],
        },
      ],
    ],
    [
      "a replayed assistant message: its text and refusal",
      {
        input: [
          { role: "user", content: "Hi" },
          {
            type: "message",
            id: "msg_1",
            role: "assistant",
            content: [
              { type: "output_text", text: "Hel", annotations: [] },
              { type: "output_text", text: "lo" },
              { type: "refusal", refusal: "no" },
            ],
          },
        ],
      },
      [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello", refusal: "no" },
      ],
    ],
    [
      "one assistant turn: reasoning, text and consecutive calls in one message; outputs as tool messages",
      {
        input: [
          { role: "user", content: "go" },
          { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "plan" }] },
          { type: "message", role: "assistant", content: "On it" },
          { type: "function_call", call_id: "c1", name: "a", arguments: "{}" },
          {
            type: "function_call",
            call_id: "c2",
            name: "close_agent",
            namespace: "multi_agent_v1",
            arguments: '{"x":1}',
          },
          { type: "function_call_output", call_id: "c1", output: "one" },
          { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "two" }] },
          { role: "assistant", content: "Done" },
        ],
      },
      [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: "On it",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "a", arguments: "{}" } },
            {
              id: "c2",
              type: "function",
              function: { name: "multi_agent_v1__close_agent", arguments: '{"x":1}' },
            },
          ],
          reasoning_details: [{ type: "reasoning.summary", summary: "plan", index: 0 }],
        },
        { role: "tool", tool_call_id: "c1", content: "one" },
        { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "two" }] },
        { role: "assistant", content: "Done" },
      ],
    ],
    [
      "a call without text: content null",
      { input: [{ type: "function_call", call_id: "c1", name: "a", arguments: "" }] },
      [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "a", arguments: "" } }],
        },
      ],
    ],
  ];
  it.each(cases)("%s", (_name, body, messages) => {
    expect(chatOf(body).messages).toEqual(messages);
  });

  it("a reasoning item from elsewhere: summary, text with its signature, foreign encrypted content", () => {
    const chat = chatOf({
      input: [
        {
          type: "reasoning",
          id: "rs_9",
          summary: [{ type: "summary_text", text: "S" }],
          content: [
            { type: "reasoning_text", text: "a" },
            { type: "reasoning_text", text: "b" },
          ],
          signature: "sig",
          encrypted_content: "opaque-blob",
        },
        { role: "assistant", content: "x" },
      ],
    });
    expect(chat.messages[0]).toEqual({
      role: "assistant",
      content: "x",
      reasoning_details: [
        { type: "reasoning.summary", summary: "S", index: 0 },
        { type: "reasoning.text", text: "ab", signature: "sig", index: 1 },
        { type: "reasoning.encrypted", data: "opaque-blob", format: "unknown", index: 2 },
      ],
    });
  });

  it("reasoning Gatehouse sent comes back as the details it carried", () => {
    const details = [{ type: "reasoning.encrypted", data: "xyz", format: "anthropic-claude-v1", index: 0 }];
    const carried = CARRY_PREFIX + Buffer.from(JSON.stringify(details)).toString("base64url");
    const chat = chatOf({
      input: [
        { type: "reasoning", id: "r", summary: [], encrypted_content: carried },
        { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
      ],
    });
    expect((chat.messages[0] as Json).reasoning_details).toEqual(details);
  });

  it("reasoning with no answer after it is left out, and named", () => {
    const r = responsesToChat({
      input: [
        { role: "user", content: "x" },
        { type: "reasoning", id: "r", summary: [] },
      ],
    });
    expect(r.chat.messages).toEqual([{ role: "user", content: "x" }]);
    expect(r.leftOut).toContain("input[1]:reasoning");
  });
});

describe("responsesToChat: tools", () => {
  const r = responsesToChat({ ...TOOLS_REQUEST, tool_choice: "auto" });

  it("flat functions → chat functions; a namespace is flattened to <namespace>__<name>", () => {
    expect(r.chat.tools).toEqual([
      {
        type: "function",
        function: {
          name: "exec_command",
          description: "Run a command",
          parameters: TOOLS_REQUEST.tools[0]?.parameters,
          strict: false,
        },
      },
      {
        type: "function",
        function: {
          name: "multi_agent_v1__close_agent",
          description: "Agents\n\nClose one",
          parameters: { type: "object", properties: { target: { type: "string" } } },
        },
      },
      { type: "function", function: { name: "multi_agent_v1__list_agents", description: "Agents" } },
    ]);
    expect(r.echo.names.fromChat("multi_agent_v1__close_agent")).toEqual({
      namespace: "multi_agent_v1",
      name: "close_agent",
    });
    expect(r.echo.names.fromChat("exec_command")).toEqual({ name: "exec_command" });
  });

  it("the namespace join trims underscores around the separator, as Codex's flat names do", () => {
    const t = responsesToChat({
      input: "x",
      tools: [
        { type: "namespace", name: "ns_", description: "d", tools: [{ type: "function", name: "_f" }] },
      ],
    });
    expect((t.chat.tools?.[0] as Json).function).toMatchObject({ name: "ns__f" });
  });

  it("hosted tools are left out and named; the echo keeps every tool as sent", () => {
    expect(r.leftOut).toContain("tools[web_search]");
    expect(r.echo.fields.tools).toEqual(TOOLS_REQUEST.tools);
    const hosted = [
      "web_search_preview",
      "file_search",
      "code_interpreter",
      "computer_use_preview",
      "image_generation",
      "local_shell",
      "shell",
      "apply_patch",
      "mcp",
      "custom",
      "openrouter:web_search",
    ];
    const t = responsesToChat({ input: "x", tools: hosted.map((type) => ({ type })) });
    expect(t.chat.tools).toBeUndefined();
    expect(t.leftOut).toEqual(hosted.map((type) => `tools[${type}]`));
  });

  it("a function's missing parameters are echoed as null (REQ in the result object)", () => {
    const t = responsesToChat({ input: "x", tools: [{ type: "function", name: "f" }] });
    expect(t.echo.fields.tools).toEqual([{ type: "function", name: "f", parameters: null }]);
    expect(t.chat.tools).toEqual([{ type: "function", function: { name: "f" } }]);
  });

  const choices: [string, unknown, unknown, string[] | null][] = [
    ["auto", "auto", "auto", null],
    ["none", "none", "none", null],
    ["required", "required", "required", null],
    [
      "a flat function",
      { type: "function", name: "exec_command" },
      { type: "function", function: { name: "exec_command" } },
      null,
    ],
    [
      "a namespaced function",
      { type: "function", name: "close_agent", namespace: "multi_agent_v1" },
      { type: "function", function: { name: "multi_agent_v1__close_agent" } },
      null,
    ],
    [
      "allowed_tools: its mode, the tools cut down",
      { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "exec_command" }] },
      "required",
      ["exec_command"],
    ],
  ];
  it.each(choices)("tool_choice %s", (_n, choice, chatChoice, names) => {
    const t = responsesToChat({ ...TOOLS_REQUEST, tool_choice: choice });
    expect(t.chat.tool_choice).toEqual(chatChoice);
    expect(t.echo.fields.tool_choice).toEqual(choice);
    const offered = (t.chat.tools ?? []).map((x) => ((x as Json).function as Json).name);
    expect(offered).toEqual(
      names ?? ["exec_command", "multi_agent_v1__close_agent", "multi_agent_v1__list_agents"],
    );
  });

  it("no tool_choice: none sent, `auto` echoed", () => {
    expect("tool_choice" in r.chat).toBe(true);
    const t = responsesToChat(TOOLS_REQUEST);
    expect("tool_choice" in t.chat).toBe(false);
    expect(t.echo.fields.tool_choice).toBe("auto");
  });
});

describe("responsesToChat: fields", () => {
  it("sampling, limits, format, reasoning and the router extras are carried", () => {
    const chat = chatOf({
      input: "x",
      models: ["a", "b"],
      stream: true,
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      max_output_tokens: 100,
      top_logprobs: 3,
      parallel_tool_calls: false,
      text: {
        format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true },
        verbosity: "low",
      },
      reasoning: { effort: "high", max_tokens: 2000, enabled: true, summary: "detailed" },
      user: "u-1",
      session_id: "s-1",
      provider: { order: ["p"] },
      trace: { trace_id: "t" },
      plugins: [{ id: "web" }],
      debug: { echo_upstream_body: true },
      cache_control: { type: "ephemeral" },
    });
    expect(chat).toEqual({
      messages: [{ role: "user", content: "x" }],
      model: "m",
      models: ["a", "b"],
      stream: true,
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      max_tokens: 100,
      logprobs: true,
      top_logprobs: 3,
      parallel_tool_calls: false,
      response_format: {
        type: "json_schema",
        json_schema: { name: "out", schema: { type: "object" }, strict: true },
      },
      verbosity: "low",
      reasoning: { effort: "high", max_tokens: 2000, enabled: true },
      user: "u-1",
      session_id: "s-1",
      provider: { order: ["p"] },
      trace: { trace_id: "t" },
      plugins: [{ id: "web" }],
      debug: { echo_upstream_body: true },
      cache_control: { type: "ephemeral" },
    });
  });

  const formats: [unknown, unknown][] = [
    [{ type: "json_object" }, { type: "json_object" }],
    [{ type: "text" }, undefined],
    [
      { type: "json_schema", name: "n", schema: { type: "object" }, description: "d" },
      { type: "json_schema", json_schema: { name: "n", schema: { type: "object" }, description: "d" } },
    ],
  ];
  it.each(formats)("text.format %j → response_format %j", (format, responseFormat) => {
    expect(chatOf({ input: "x", text: { format } }).response_format).toEqual(responseFormat);
  });

  it("output logprobs asked through include alone", () => {
    const chat = chatOf({ input: "x", include: ["message.output_text.logprobs"] });
    expect(chat.logprobs).toBe(true);
    expect(chat.top_logprobs).toBeUndefined();
  });

  it("fields that change nothing are dropped and named; unknown fields too", () => {
    const r = responsesToChat({
      input: "x",
      service_tier: "auto",
      include: ["reasoning.encrypted_content", "file_search_call.results"],
      prompt_cache_key: "k",
      prompt_cache_options: { ttl: "1h" },
      client_metadata: { a: "b" },
      truncation: "auto",
      metadata: { app: "x" },
      safety_identifier: "sid",
      max_tool_calls: 3,
      modalities: ["text"],
      reasoning: { mode: "standard", context: "all_turns" },
      some_future_field: 1,
      store: false,
      previous_response_id: null,
    });
    expect([...r.leftOut].sort()).toEqual(
      [
        "service_tier",
        "include",
        "prompt_cache_key",
        "prompt_cache_options",
        "client_metadata",
        "truncation",
        "metadata",
        "safety_identifier",
        "max_tool_calls",
        "modalities",
        "reasoning.mode",
        "reasoning.context",
        "some_future_field",
      ].sort(),
    );
    expect(r.chat).toEqual({ messages: [{ role: "user", content: "x" }] });
    expect(r.echo.fields).toMatchObject({
      metadata: { app: "x" },
      prompt_cache_key: "k",
      truncation: "auto",
      safety_identifier: "sid",
    });
  });

  it("left-out names are header-safe, each once, and bounded (they come from the client's keys)", () => {
    const body: Json = {
      input: "x",
      "bad key\r\nx-injected: 1": 1,
      tools: [{ type: "mcp" }, { type: "mcp" }],
    };
    for (let i = 0; i < 40; i++) body[`extra_${i}`] = i;
    const named = responsesToChat(body).leftOut;
    expect(named[0]).toBe("bad_key__x-injected:_1");
    expect(named).toHaveLength(33);
    expect(named.at(-1)).toBe("and 10 more");
    for (const n of named) expect(n).toMatch(/^[\w.:[\]\- ]+$/);
  });

  it("include asking only for what Gatehouse sends anyway is not named", () => {
    expect(responsesToChat({ input: "x", include: ["reasoning.encrypted_content"] }).leftOut).toEqual([]);
  });

  it("the echo: every required field, null or the default when not sent", () => {
    expect(responsesToChat({ input: "x" }).echo.fields).toEqual({
      instructions: null,
      metadata: null,
      temperature: null,
      top_p: null,
      presence_penalty: null,
      frequency_penalty: null,
      tools: [],
      tool_choice: "auto",
      parallel_tool_calls: true,
      max_output_tokens: null,
      reasoning: null,
      text: { format: { type: "text" } },
      store: false,
    });
    const sent = responsesToChat({
      input: "x",
      instructions: "i",
      temperature: 1,
      max_output_tokens: 9,
      reasoning: { summary: "auto" },
      top_logprobs: 0,
      user: "u",
      text: { verbosity: "high" },
    }).echo.fields;
    expect(sent).toMatchObject({
      instructions: "i",
      temperature: 1,
      max_output_tokens: 9,
      reasoning: { effort: null, summary: "auto" },
      top_logprobs: 0,
      user: "u",
      text: { format: { type: "text" }, verbosity: "high" },
    });
  });
});

describe("responsesToChat: refusals name the field", () => {
  const fn = { type: "function", name: "f" };
  const cases: [string, unknown, string][] = [
    ["store: true", { input: "x", store: true }, "store: Gatehouse is stateless"],
    [
      "previous_response_id",
      { input: "x", previous_response_id: "resp_1" },
      "previous_response_id: Gatehouse is stateless",
    ],
    ["conversation", { input: "x", conversation: "conv_1" }, "conversation: Gatehouse is stateless"],
    ["background", { input: "x", background: true }, "background: Gatehouse is stateless"],
    ["a stored prompt", { input: "x", prompt: { id: "p" } }, "prompt: Gatehouse is stateless"],
    ["a body that is not an object", [], "body: must be a JSON object"],
    ["no input", { model: "m" }, "input: required"],
    ["input of the wrong type", { input: 3 }, "input: must be a string or a list of items"],
    ["an item that is not an object", { input: ["x"] }, "input[0]: must be an object"],
    ["an unknown role", { input: [{ role: "tool", content: "x" }] }, "input[0].role: must be"],
    [
      "an unknown part",
      { input: [{ role: "user", content: [{ type: "input_foo" }] }] },
      "input[0].content[0].type:",
    ],
    [
      "an image by file id",
      { input: [{ role: "user", content: [{ type: "input_image", detail: "auto", file_id: "f" }] }] },
      "input[0].content[0].file_id: names a stored file",
    ],
    [
      "an image without its url",
      { input: [{ role: "user", content: [{ type: "input_image", detail: "auto" }] }] },
      "input[0].content[0].image_url: required",
    ],
    [
      "an image detail chat lacks",
      { input: [{ role: "user", content: [{ type: "input_image", detail: "huge", image_url: "u" }] }] },
      "input[0].content[0].detail:",
    ],
    [
      "a file by file id",
      { input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] },
      "input[0].content[0].file_id:",
    ],
    [
      "a file without data",
      { input: [{ role: "user", content: [{ type: "input_file", filename: "a" }] }] },
      "input[0].content[0].file_data: required",
    ],
    [
      "audio without format",
      { input: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "x" } }] }] },
      "input[0].content[0].input_audio.format: required",
    ],
    [
      "an assistant part that is not text",
      { input: [{ role: "assistant", content: [{ type: "input_image", image_url: "u" }] }] },
      "input[0].content[0].type:",
    ],
    [
      "item_reference",
      { input: [{ type: "item_reference", id: "msg_1" }] },
      "input[0].type: item_reference points at a stored item",
    ],
    [
      "a hosted tool's item",
      {
        input: [
          { role: "user", content: "x" },
          { type: "web_search_call", id: "ws" },
        ],
      },
      'input[1].type: "web_search_call" items are not supported',
    ],
    [
      "compaction",
      { input: [{ type: "compaction", encrypted_content: "x" }] },
      'input[0].type: "compaction"',
    ],
    [
      "a call without call_id",
      { input: [{ type: "function_call", name: "f", arguments: "{}" }] },
      "input[0].call_id: required",
    ],
    [
      "a call with object arguments",
      { input: [{ type: "function_call", call_id: "c", name: "f", arguments: {} }] },
      "input[0].arguments: must be a string",
    ],
    [
      "an output of the wrong type",
      { input: [{ type: "function_call_output", call_id: "c", output: 3 }] },
      "input[0].output: must be a string or a list of parts",
    ],
    [
      "carried reasoning that does not decode",
      {
        input: [
          { type: "reasoning", summary: [], encrypted_content: `${CARRY_PREFIX}!!!` },
          { role: "assistant", content: "x" },
        ],
      },
      "input[0].encrypted_content: is not the reasoning Gatehouse sent",
    ],
    [
      "a summary part of the wrong type",
      { input: [{ type: "reasoning", summary: [{ type: "text", text: "x" }] }] },
      "input[0].summary[0]: must be",
    ],
    ["a tool that is not an object", { input: "x", tools: [1] }, "tools[0]: must be an object"],
    ["a function without a name", { input: "x", tools: [{ type: "function" }] }, "tools[0].name: required"],
    [
      "two functions of one name",
      { input: "x", tools: [fn, fn] },
      'tools[1].name: a second function named "f"',
    ],
    [
      "a namespaced function clashing with a flat one",
      {
        input: "x",
        tools: [
          { type: "function", name: "n__f" },
          { type: "namespace", name: "n", description: "", tools: [fn] },
        ],
      },
      "tools[1].tools[0].name: a second function",
    ],
    [
      "parameters that are not an object",
      { input: "x", tools: [{ ...fn, parameters: "x" }] },
      "tools[0].parameters: must be an object",
    ],
    ["an unknown tool_choice", { input: "x", tools: [fn], tool_choice: "sometimes" }, "tool_choice: must be"],
    [
      "a tool_choice naming no tool",
      { input: "x", tools: [fn], tool_choice: { type: "function", name: "g" } },
      'tool_choice.name: no function tool named "g"',
    ],
    [
      "a hosted tool_choice",
      { input: "x", tools: [{ type: "web_search_preview" }], tool_choice: { type: "web_search_preview" } },
      'tool_choice.type: "web_search_preview" is a hosted tool',
    ],
    [
      "a hosted allowed tool",
      {
        input: "x",
        tools: [fn],
        tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "mcp" }] },
      },
      "tool_choice.tools[0].type:",
    ],
    [
      "allowed_tools without a mode",
      { input: "x", tools: [fn], tool_choice: { type: "allowed_tools", tools: [] } },
      "tool_choice.mode: required",
    ],
    [
      "required with no function left",
      { input: "x", tools: [{ type: "web_search" }], tool_choice: "required" },
      "tool_choice: requires a tool call",
    ],
    [
      "a temperature that is not a number",
      { input: "x", temperature: "hot" },
      "temperature: must be a number",
    ],
    [
      "max_output_tokens of 0",
      { input: "x", max_output_tokens: 0 },
      "max_output_tokens: must be an integer of at least 1",
    ],
    ["a fractional top_logprobs", { input: "x", top_logprobs: 1.5 }, "top_logprobs: must be an integer"],
    ["a model that is not a string", { input: "x", model: 5 }, "model: must be a string"],
    [
      "models with a number",
      { input: "x", models: ["a", 1] },
      "models[1]: must be a string of 1 to 256 characters",
    ],
    ["stream that is not a boolean", { input: "x", stream: "yes" }, "stream: must be true or false"],
    ["an unknown format", { input: "x", text: { format: { type: "xml" } } }, "text.format.type: must be"],
    [
      "a json_schema without schema",
      { input: "x", text: { format: { type: "json_schema", name: "n" } } },
      "text.format.schema: required",
    ],
    [
      "a json_schema without name",
      { input: "x", text: { format: { type: "json_schema", schema: {} } } },
      "text.format.name: required",
    ],
    ["an unknown effort", { input: "x", reasoning: { effort: "huge" } }, "reasoning.effort: must be one of"],
    ["reasoning mode pro", { input: "x", reasoning: { mode: "pro" } }, "reasoning.mode:"],
    ["metadata with a number", { input: "x", metadata: { a: 1 } }, "metadata.a: must be a string"],
    ["an output modality other than text", { input: "x", modalities: ["text", "image"] }, "modalities:"],
    ["provider that is not an object", { input: "x", provider: "p" }, "provider: must be an object"],
    [
      "provider.order with a number",
      { input: "x", provider: { order: ["a", 2] } },
      "provider.order[1]: must be a string",
    ],
    [
      "provider.allow_fallbacks not a boolean",
      { input: "x", provider: { allow_fallbacks: "no" } },
      "provider.allow_fallbacks: must be true or false",
    ],
    [
      "provider.max_price not an object",
      { input: "x", provider: { max_price: 1 } },
      "provider.max_price: must be an object",
    ],
    ["a temperature above 2", { input: "x", temperature: 2.5 }, "temperature: must be a number from 0 to 2"],
    ["a top_p above 1", { input: "x", top_p: 1.5 }, "top_p: must be a number from 0 to 1"],
    [
      "a penalty below -2",
      { input: "x", presence_penalty: -3 },
      "presence_penalty: must be a number from -2 to 2",
    ],
    [
      "max_output_tokens past the chat limit",
      { input: "x", max_output_tokens: 10_000_001 },
      "max_output_tokens: must be an integer of at least 1 and at most 10000000",
    ],
    [
      "top_logprobs above 20",
      { input: "x", top_logprobs: 21 },
      "top_logprobs: must be an integer of at least 0 and at most 20",
    ],
    ["an empty model", { input: "x", model: "" }, "model: must be a string of 1 to 256 characters"],
    ["no models", { input: "x", models: [] }, "models: must list 1 to 16 model ids"],
    [
      "seventeen models",
      { input: "x", models: Array.from({ length: 17 }, (_v, i) => `m${i}`) },
      "models: must list 1 to 16",
    ],
    [
      "a user past 1024 characters",
      { input: "x", user: "u".repeat(1025) },
      "user: must be a string of 1 to 1024 characters",
    ],
    [
      "a session_id past 256 characters",
      { input: "x", session_id: "s".repeat(257) },
      "session_id: must be a string of 1 to 256 characters",
    ],
  ];
  it.each(cases)("%s", (_name, body, message) => {
    expect(refusal(body)).toContain(message);
  });
});

describe("responsesToChat: the recorded Codex turns", () => {
  const [one, two] = CODEX_TURNS.map((t) => responsesToChat(t.body));

  it("turn 1: developer and user messages, the namespace flattened, web_search left out", () => {
    expect(one?.chat.messages).toEqual([
      { role: "developer", content: [{ type: "text", text: "<16979 characters>" }] },
      {
        role: "developer",
        content: [
          { type: "text", text: "<2127 characters>" },
          { type: "text", text: "<341 characters>" },
        ],
      },
      { role: "user", content: [{ type: "text", text: "<415 characters>" }] },
      { role: "user", content: [{ type: "text", text: "<8 characters>" }] },
    ]);
    const names = (one?.chat.tools ?? []).map((t) => ((t as Json).function as Json).name);
    expect(names).toEqual([
      "exec_command",
      "write_stdin",
      "request_user_input",
      "view_image",
      "multi_agent_v1__close_agent",
      "multi_agent_v1__resume_agent",
      "multi_agent_v1__send_input",
      "multi_agent_v1__spawn_agent",
      "multi_agent_v1__wait_agent",
      "get_goal",
      "create_goal",
      "update_goal",
    ]);
    expect(one?.leftOut).toEqual(["client_metadata", "tools[web_search]", "prompt_cache_key"]);
    expect(one?.chat).toMatchObject({
      model: "local/tiny",
      stream: true,
      tool_choice: "auto",
      parallel_tool_calls: true,
    });
    // `reasoning: {summary: "auto"}` asks for nothing the chat request could carry: echoed only.
    expect(one?.chat.reasoning).toBeUndefined();
    expect(one?.echo.fields.reasoning).toEqual({ effort: null, summary: "auto" });
    expect(one?.echo.names.fromChat("multi_agent_v1__spawn_agent")).toEqual({
      namespace: "multi_agent_v1",
      name: "spawn_agent",
    });
  });

  it("turn 2: the function_call and its output pair up as a tool call and its tool message", () => {
    const messages = two?.chat.messages ?? [];
    expect(messages).toHaveLength(6);
    expect(messages.slice(4)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "exec_command", arguments: '{"cmd":"echo hello-from-tool"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "<118 characters>" },
    ]);
    expect(two?.chat.messages.slice(0, 4)).toEqual(one?.chat.messages);
  });
});

describe("responsesToChat: the chat body passes the chat route's own schema", () => {
  // The Responses route hands the body to the data plane without the chat route's check.
  const valid = new Ajv({ strict: false }).compile(ChatRequestBody);
  const bodies: [string, unknown][] = [
    ...CODEX_TURNS.map((t): [string, unknown] => [`Codex turn ${t.turn}`, t.body]),
    [
      "tools and a choice",
      {
        ...TOOLS_REQUEST,
        tool_choice: { type: "function", name: "close_agent", namespace: "multi_agent_v1" },
      },
    ],
    [
      "every carried field at its bound",
      {
        input: [{ role: "user", content: [{ type: "input_text", text: "x" }] }],
        model: "m".repeat(256),
        models: Array.from({ length: 16 }, (_v, i) => `m${i}`),
        temperature: 2,
        top_p: 1,
        max_output_tokens: 10_000_000,
        user: "u".repeat(1024),
        session_id: "s".repeat(256),
        provider: {
          order: ["a"],
          only: ["b"],
          ignore: ["c"],
          allow_fallbacks: false,
          require_parameters: true,
          max_price: { prompt: 1 },
        },
        stream: false,
      },
    ],
  ];
  it("the schema bites (no message, a temperature past 2)", () => {
    expect(valid({ messages: [] })).toBe(false);
    expect(valid({ messages: [{ role: "user", content: "x" }], temperature: 3 })).toBe(false);
  });

  it.each(bodies)("%s", (_n, body) => {
    const chat = responsesToChat(body).chat;
    expect(valid(chat), JSON.stringify(valid.errors)).toBe(true);
  });
});
