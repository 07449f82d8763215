import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import {
  neverAnswer,
  neverEnd,
  sleep,
  sse,
  startFakeServer,
  type FakeServer,
  type RecordedRequest,
} from "./fake-server.js";

/**
 * A fake OpenAI-compatible upstream (POST …/chat/completions), following OpenAI's documented wire
 * format: `chat.completion` objects, `chat.completion.chunk` SSE events ending in `data: [DONE]`,
 * `usage: null` on every chunk and a final usage-only chunk only when the request asked for
 * `stream_options.include_usage` (as OpenAI does). The requested model picks the behaviour:
 *
 * - `ok`: "Hello there, friend." in 3 chunks; usage 12 prompt (4 cached), 5 completion (2 reasoning)
 * - `tools`: a tool call `get_weather({"city":"Paris"})`, its arguments split over two chunks
 * - `slow-headers`: answers after 400 ms; `slow-body` (stream): headers at once, first chunk after 400 ms
 * - `error-500`: 500 with an OpenAI error body; `rate-limited`: 429 with `Retry-After: 7`
 * - `bad-json`: a truncated JSON body / a first event that is not JSON; `bad-json-late`: one good chunk first
 * - `reset`: the connection is destroyed (stream: after one chunk)
 * - `never-ends`: one chunk, then keep-alive comments forever
 * - `no-first-byte`: never answers (no headers); `stall` (stream): one chunk, then total silence
 * - `no-usage`: never reports usage
 * - `in-band-error` (stream): one chunk, then an `{"error":…}` event
 */
export const FAKE_OPENAI_KEY = "sk-fake-openai";
export const OK_TEXT = ["Hello", " there,", " friend."];

const USAGE = {
  prompt_tokens: 12,
  completion_tokens: 5,
  total_tokens: 17,
  prompt_tokens_details: { cached_tokens: 4, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 2,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};

const TOOL_CALL = {
  id: "call_abc",
  type: "function",
  function: { name: "get_weather", arguments: '{"city":"Paris"}' },
};

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function chunk(model: string, delta: unknown, finish: string | null = null): unknown {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 1735689600,
    model,
    system_fingerprint: "fp_fake",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  };
}

async function handle(req: RecordedRequest, res: ServerResponse, socket: Socket): Promise<void> {
  if (!req.path.endsWith("/chat/completions")) return json(res, 404, { error: { message: "not found" } });
  if (req.headers.authorization !== `Bearer ${FAKE_OPENAI_KEY}`) {
    return json(res, 401, {
      error: {
        message: "Incorrect API key provided",
        type: "invalid_request_error",
        code: "invalid_api_key",
      },
    });
  }
  const model = String(req.body?.model);
  const stream = req.body?.stream === true;
  const includeUsage = stream && req.body?.stream_options?.include_usage === true && model !== "no-usage";

  if (model === "slow-headers") await sleep(400);
  if (model === "no-first-byte") return neverAnswer(res);
  if (model === "error-500")
    return json(res, 500, { error: { message: "The server had an error", type: "server_error" } });
  if (model === "rate-limited") {
    return json(
      res,
      429,
      { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } },
      { "retry-after": "7" },
    );
  }
  if (model === "reset" && !stream) return void socket.destroy();

  if (!stream) {
    if (model === "bad-json") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end('{"id":"chatcmpl-fake","choices":[');
    }
    const message =
      model === "tools"
        ? { role: "assistant", content: null, refusal: null, tool_calls: [TOOL_CALL] }
        : { role: "assistant", content: OK_TEXT.join(""), refusal: null };
    return json(res, 200, {
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 1735689600,
      model,
      system_fingerprint: "fp_fake",
      choices: [
        { index: 0, message, logprobs: null, finish_reason: model === "tools" ? "tool_calls" : "stop" },
      ],
      ...(model === "no-usage" ? {} : { usage: USAGE }),
    });
  }

  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.flushHeaders();
  if (model === "slow-body") await sleep(400);
  if (model === "bad-json") return void res.end("data: {not json\n\n");
  if (model === "tools") {
    sse(
      res,
      chunk(model, {
        role: "assistant",
        content: null,
        tool_calls: [{ index: 0, ...TOOL_CALL, function: { name: "get_weather", arguments: "" } }],
      }),
    );
    sse(res, chunk(model, { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
    sse(res, chunk(model, { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    sse(res, chunk(model, {}, "tool_calls"));
  } else {
    sse(res, chunk(model, { role: "assistant", content: OK_TEXT[0], refusal: null }));
    if (model === "bad-json-late") return void res.end("data: {not json\n\n");
    if (model === "reset") return void setTimeout(() => socket.destroy(), 20);
    if (model === "never-ends") return neverEnd(res);
    if (model === "stall") return neverAnswer(res);
    if (model === "in-band-error") {
      sse(res, { error: { message: "Upstream overloaded", code: 503 } });
      return void res.end();
    }
    sse(res, chunk(model, { content: OK_TEXT[1] }));
    sse(res, chunk(model, { content: OK_TEXT[2] }));
    sse(res, chunk(model, {}, "stop"));
  }
  if (includeUsage) sse(res, { ...(chunk(model, {}) as object), choices: [], usage: USAGE });
  sse(res, "[DONE]");
  res.end();
}

export function startFakeOpenAI(): Promise<FakeServer> {
  return startFakeServer(handle);
}
