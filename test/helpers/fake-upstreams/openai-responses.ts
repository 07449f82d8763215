import type { ServerResponse } from "node:http";
import { answerResponses } from "./agent-turn.js";
import { sse } from "./fake-server.js";

/**
 * A fake OpenAI Responses API (POST …/responses), following OpenAI's documented wire format: a
 * `response` result object, or its events (`event: <type>` and `data: <json>`, each with its
 * `sequence_number`, `response.created` … `response.completed` with usage, then `data: [DONE]`).
 * The requested model picks the behaviour:
 *
 * - `ok`: a message with OK_TEXT (streamed in 3 deltas); usage RESPONSES_USAGE
 * - `tools`: a function call RESPONSES_CALL (`get_weather({"city":"Paris"})`, its arguments in two
 *   deltas); usage RESPONSES_USAGE
 * - `reasoning`: a reasoning item (RESPONSES_SUMMARY, encrypted RESPONSES_ENCRYPTED), then OK_TEXT
 * - `fail-late` (stream): one text delta, then `response.failed`
 * - `error-500`: 500 with an OpenAI error body
 * - `agent`: a scripted tool-using turn for coding agents (agent-turn.ts)
 */
export const RESPONSES_TEXT = ["Hello", " there,", " friend."];
export const RESPONSES_USAGE = {
  input_tokens: 21,
  input_tokens_details: { cached_tokens: 6 },
  output_tokens: 9,
  output_tokens_details: { reasoning_tokens: 3 },
  total_tokens: 30,
};
export const RESPONSES_CALL = {
  call_id: "call_native_1",
  name: "get_weather",
  args: ['{"city":', '"Paris"}'],
};
export const RESPONSES_SUMMARY = "Greeting the user.";
export const RESPONSES_ENCRYPTED = "gAAAA-native-opaque";

type Json = Record<string, any>;

function result(model: string, status: string, output: Json[], usage: Json | null): Json {
  return {
    id: "resp_native_1",
    object: "response",
    created_at: 1_735_689_600,
    completed_at: status === "completed" ? 1_735_689_601 : null,
    status,
    model,
    output,
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: null,
    temperature: null,
    top_p: null,
    presence_penalty: null,
    frequency_penalty: null,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    store: false,
    usage,
  };
}

const message = (text: string): Json => ({
  type: "message",
  id: "msg_native_1",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [] }],
});

const call = (): Json => ({
  type: "function_call",
  id: "fc_native_1",
  call_id: RESPONSES_CALL.call_id,
  name: RESPONSES_CALL.name,
  arguments: RESPONSES_CALL.args.join(""),
  status: "completed",
});

const reasoning = (): Json => ({
  type: "reasoning",
  id: "rs_native_1",
  summary: [{ type: "summary_text", text: RESPONSES_SUMMARY }],
  encrypted_content: RESPONSES_ENCRYPTED,
});

function outputOf(kind: string): Json[] {
  if (kind === "tools") return [call()];
  if (kind === "reasoning") return [reasoning(), message(RESPONSES_TEXT.join(""))];
  return [message(RESPONSES_TEXT.join(""))];
}

export function fakeResponses(res: ServerResponse, body: Json): void {
  const model = String(body?.model);
  if (model === "agent") return answerResponses(res, body);
  if (model === "error-500") {
    res.writeHead(500, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ error: { message: "The server had an error", type: "server_error", code: null } }),
    );
    return;
  }
  const output = outputOf(model);
  if (body?.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(result(model, "completed", output, RESPONSES_USAGE)));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  let seq = 0;
  const send = (type: string, fields: Json): void =>
    sse(res, { type, sequence_number: seq++, ...fields }, type);
  send("response.created", { response: result(model, "in_progress", [], null) });
  send("response.in_progress", { response: result(model, "in_progress", [], null) });
  output.forEach((item, i) => {
    const at = { item_id: item.id, output_index: i };
    if (item.type === "message") {
      send("response.output_item.added", {
        output_index: i,
        item: { ...item, status: "in_progress", content: [] },
      });
      send("response.content_part.added", {
        ...at,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      });
      for (const delta of RESPONSES_TEXT) {
        send("response.output_text.delta", { ...at, content_index: 0, delta, logprobs: [] });
        if (model === "fail-late") {
          send("response.failed", {
            response: {
              ...result(model, "failed", [], null),
              error: { code: "server_error", message: "the model crashed" },
            },
          });
          res.end("data: [DONE]\n\n");
          return;
        }
      }
      send("response.output_text.done", {
        ...at,
        content_index: 0,
        text: RESPONSES_TEXT.join(""),
        logprobs: [],
      });
    } else if (item.type === "function_call") {
      send("response.output_item.added", {
        output_index: i,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      for (const delta of RESPONSES_CALL.args)
        send("response.function_call_arguments.delta", { ...at, delta });
      send("response.function_call_arguments.done", { ...at, name: item.name, arguments: item.arguments });
    } else {
      send("response.output_item.added", {
        output_index: i,
        item: { ...item, summary: [], encrypted_content: undefined },
      });
      send("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta: RESPONSES_SUMMARY });
    }
    send("response.output_item.done", { output_index: i, item });
  });
  if (res.writableEnded) return;
  send("response.completed", { response: result(model, "completed", output, RESPONSES_USAGE) });
  res.end("data: [DONE]\n\n");
}
