import type { ServerResponse } from "node:http";
import { sse } from "./fake-server.js";

/**
 * A scripted model for coding agents (the `agent` behaviour of every fake upstream): it plays one
 * tool-using turn the way a model would, in whichever wire format its fake speaks.
 *
 * - The prompt names a marker: "… `echo gatehouse-agent-<id>` …". Until a tool result holds the
 *   marker, the answer is one call of the agent's shell tool running that command (Claude Code's
 *   `Bash` takes `{command}`, Codex's `exec_command` takes `{cmd}`).
 * - Once a tool result carries the marker (the agent ran the command and sent its output back),
 *   the answer is the text `AGENT-DONE <marker>`.
 * - A tool result without it answers `AGENT-TOOL-FAILED: …` with what the agent sent, and a request
 *   without a marker or a shell tool answers `AGENT-CONFUSED: …`: the agent then prints that, and
 *   the run shows why it failed.
 */
export type AgentShape = "anthropic" | "chat" | "responses";

export type AgentAnswer =
  { kind: "tool"; id: string; name: string; input: Record<string, unknown> } | { kind: "text"; text: string };

type Json = Record<string, any>;

const MARKER = /echo (gatehouse-agent-[a-z0-9]+)/;

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p: Json) => (typeof p === "string" ? p : String(p?.text ?? p?.output ?? ""))).join("\n")
      : "";

/** The tools a request offers, by name, in each wire format. */
function toolNames(shape: AgentShape, body: Json): string[] {
  const tools: Json[] = Array.isArray(body.tools) ? body.tools : [];
  if (shape === "chat") return tools.map((t) => String(t.function?.name ?? ""));
  return tools.map((t) => String(t.name ?? ""));
}

/** The texts of the tool results the request carries back. */
function toolResults(shape: AgentShape, body: Json): string[] {
  if (shape === "anthropic") {
    const blocks = (body.messages as Json[]).flatMap((m): Json[] =>
      Array.isArray(m.content) ? (m.content as Json[]) : [],
    );
    return blocks.filter((b: Json) => b.type === "tool_result").map((b: Json) => textOf(b.content));
  }
  if (shape === "chat")
    return (body.messages as Json[]).filter((m) => m.role === "tool").map((m) => textOf(m.content));
  const items: Json[] = Array.isArray(body.input) ? body.input : [];
  return items.filter((i) => i.type === "function_call_output").map((i) => textOf(i.output));
}

/** What the scripted model answers to this request. */
export function agentTurn(shape: AgentShape, body: Json): AgentAnswer {
  const marker = MARKER.exec(JSON.stringify(body))?.[1];
  const names = toolNames(shape, body);
  if (!marker) return { kind: "text", text: `AGENT-CONFUSED: no marker in the request` };
  const results = toolResults(shape, body);
  if (results.some((r) => r.includes(marker))) return { kind: "text", text: `AGENT-DONE ${marker}` };
  if (results.length > 0)
    return { kind: "text", text: `AGENT-TOOL-FAILED: ${results.join(" | ").slice(0, 300)}` };
  const command = `echo ${marker}`;
  const id = shape === "anthropic" ? "toolu_agent_1" : "call_agent_1";
  if (names.includes("Bash"))
    return { kind: "tool", id, name: "Bash", input: { command, description: "Print the marker" } };
  if (names.includes("exec_command"))
    return { kind: "tool", id, name: "exec_command", input: { cmd: command } };
  return { kind: "text", text: `AGENT-CONFUSED: no shell tool among ${names.join(", ")}` };
}

const USAGE = { input: 40, output: 12 };

/** Splits a tool call's arguments in two, as providers stream them. */
const halves = (s: string): string[] => [
  s.slice(0, Math.ceil(s.length / 2)),
  s.slice(Math.ceil(s.length / 2)),
];

/** Anthropic's Messages API: a `message`, or its named events. */
export function answerAnthropic(res: ServerResponse, body: Json): void {
  const a = agentTurn("anthropic", body);
  const usage = { input_tokens: USAGE.input, output_tokens: USAGE.output };
  const block =
    a.kind === "tool"
      ? { type: "tool_use", id: a.id, name: a.name, input: a.input }
      : { type: "text", text: a.text };
  const stop = a.kind === "tool" ? "tool_use" : "end_turn";
  const message = (content: unknown[], stopReason: string | null, u: Json) => ({
    id: "msg_agent",
    type: "message",
    role: "assistant",
    model: body.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: u,
  });
  if (body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    return void res.end(JSON.stringify(message([block], stop, usage)));
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (type: string, fields: Json) => sse(res, { type, ...fields }, type);
  send("message_start", { message: message([], null, { ...usage, output_tokens: 1 }) });
  if (a.kind === "tool") {
    send("content_block_start", { index: 0, content_block: { ...block, input: {} } });
    for (const partial_json of halves(JSON.stringify(a.input)))
      send("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json } });
  } else {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: a.text } });
  }
  send("content_block_stop", { index: 0 });
  send("message_delta", {
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: USAGE.output },
  });
  send("message_stop", {});
  res.end();
}

/** OpenAI's chat completions: a `chat.completion`, or its chunks and `[DONE]`. */
export function answerChat(res: ServerResponse, body: Json): void {
  const a = agentTurn("chat", body);
  const usage = {
    prompt_tokens: USAGE.input,
    completion_tokens: USAGE.output,
    total_tokens: USAGE.input + USAGE.output,
  };
  const call = (args: string) => ({
    id: a.kind === "tool" ? a.id : "",
    type: "function",
    function: { name: a.kind === "tool" ? a.name : "", arguments: args },
  });
  const finish = a.kind === "tool" ? "tool_calls" : "stop";
  const base = { id: "chatcmpl-agent", created: 1_735_689_600, model: body.model };
  if (body.stream !== true) {
    const message =
      a.kind === "tool"
        ? { role: "assistant", content: null, tool_calls: [call(JSON.stringify(a.input))] }
        : { role: "assistant", content: a.text };
    res.writeHead(200, { "content-type": "application/json" });
    return void res.end(
      JSON.stringify({
        ...base,
        object: "chat.completion",
        choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
        usage,
      }),
    );
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: Json, finish_reason: string | null = null) =>
    sse(res, {
      ...base,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason, logprobs: null }],
      usage: null,
    });
  if (a.kind === "tool") {
    chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, ...call("") }] });
    for (const args of halves(JSON.stringify(a.input)))
      chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] });
  } else {
    chunk({ role: "assistant", content: a.text });
  }
  chunk({}, finish);
  if (body.stream_options?.include_usage === true)
    sse(res, { ...base, object: "chat.completion.chunk", choices: [], usage });
  sse(res, "[DONE]");
  res.end();
}

/** OpenAI's Responses API: a `response`, or its numbered events and `[DONE]`. */
export function answerResponses(res: ServerResponse, body: Json): void {
  const a = agentTurn("responses", body);
  const usage = {
    input_tokens: USAGE.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: USAGE.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: USAGE.input + USAGE.output,
  };
  const item: Json =
    a.kind === "tool"
      ? {
          type: "function_call",
          id: "fc_agent_1",
          call_id: a.id,
          name: a.name,
          arguments: JSON.stringify(a.input),
          status: "completed",
        }
      : {
          type: "message",
          id: "msg_agent_1",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: a.text, annotations: [] }],
        };
  const response = (status: string, output: Json[], u: Json | null) => ({
    id: "resp_agent_1",
    object: "response",
    created_at: 1_735_689_600,
    status,
    model: body.model,
    output,
    error: null,
    incomplete_details: null,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    store: false,
    usage: u,
  });
  if (body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    return void res.end(JSON.stringify(response("completed", [item], usage)));
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  let seq = 0;
  const send = (type: string, fields: Json) => sse(res, { type, sequence_number: seq++, ...fields }, type);
  const at = { item_id: item.id, output_index: 0 };
  send("response.created", { response: response("in_progress", [], null) });
  send("response.in_progress", { response: response("in_progress", [], null) });
  if (a.kind === "tool") {
    send("response.output_item.added", {
      output_index: 0,
      item: { ...item, status: "in_progress", arguments: "" },
    });
    for (const delta of halves(item.arguments as string))
      send("response.function_call_arguments.delta", { ...at, delta });
    send("response.function_call_arguments.done", { ...at, name: item.name, arguments: item.arguments });
  } else {
    const part = { type: "output_text", text: "", annotations: [] };
    send("response.output_item.added", {
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    });
    send("response.content_part.added", { ...at, content_index: 0, part });
    send("response.output_text.delta", { ...at, content_index: 0, delta: a.text, logprobs: [] });
    send("response.output_text.done", { ...at, content_index: 0, text: a.text, logprobs: [] });
    send("response.content_part.done", { ...at, content_index: 0, part: { ...part, text: a.text } });
  }
  send("response.output_item.done", { output_index: 0, item });
  send("response.completed", { response: response("completed", [item], usage) });
  res.end("data: [DONE]\n\n");
}
