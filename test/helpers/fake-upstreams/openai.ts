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
import { answerChat } from "./agent-turn.js";
import { fakeResponses } from "./openai-responses.js";

/**
 * A fake OpenAI-compatible upstream (POST …/chat/completions; …/responses in
 * openai-responses.ts, …/embeddings below), following OpenAI's documented wire
 * format: `chat.completion` objects, `chat.completion.chunk` SSE events ending in `data: [DONE]`,
 * `usage: null` on every chunk and a final usage-only chunk only when the request asked for
 * `stream_options.include_usage` (as OpenAI does). The requested model picks the behaviour:
 *
 * - `ok`: "Hello there, friend." in 3 chunks; usage 12 prompt (4 cached), 5 completion (2 reasoning)
 * - `cache-write`: as `ok`, its usage reporting 3 of the 12 prompt tokens written to the cache
 *   (`prompt_tokens_details.cache_write_tokens`, as routers serving Anthropic's models report it)
 * - `tools`: a tool call `get_weather({"city":"Paris"})`, its arguments split over two chunks
 * - `slow-headers`: answers after 400 ms; `slow-body` (stream): headers at once, first chunk after 400 ms
 * - `error-500`: 500 with an OpenAI error body; `rate-limited`: 429 with `Retry-After: 7`
 * - `bad-json`: a truncated JSON body / a first event that is not JSON; `bad-json-late`: one good chunk first
 * - `reset`: the connection is destroyed (stream: after one chunk)
 * - `never-ends`: one chunk, then keep-alive comments forever
 * - `no-first-byte`: never answers (no headers); `stall` (stream): one chunk, then total silence
 * - `no-usage`: never reports usage; `<model>-no-usage` behaves as `<model>` without usage
 *   (`tools-no-usage`, `reasoning-no-usage`, `parts-no-usage`, `two-choices-no-usage`)
 * - `reasoning`: REASONING_TEXT as `reasoning_content` (vLLM, DeepSeek), then REASONING_ANSWER
 * - `parts`: Mistral's reasoning models' content as a list of parts, a `thinking` part (PARTS_THINKING)
 *   then `text` parts (PARTS_TEXT); streamed as deltas whose content is a list too, then a string
 * - `two-choices`: two choices (as with `n: 2`), OK_TEXT and TWO_CHOICES_SECOND; streamed interleaved
 * - `in-band-error` (stream): one chunk, then an `{"error":…}` event
 * - `llama-error` (stream): an `error: {"code":400,"message":…}` line and the end, as llama.cpp's
 *   server reports a prompt over its context (LLAMA_ERROR); `llama-error-late`: one chunk first
 * - `refusal`: the model declines (OpenAI's structured outputs): `content: null`, `refusal`
 *   REFUSAL_TEXT (streamed as refusal deltas)
 * - `reasoning-details`: an upstream that is itself a router: OK_TEXT with `reasoning` and
 *   `reasoning_details` (REASONING_DETAILS; streamed on the first chunk)
 * - tool calls as other servers stream them: `tools-nulls` (the `tools` call, its continuations
 *   with `"id": null`, `"type": null`, `"function": {"name": null, …}`, as SGLang sends them);
 *   `tools-no-index` (TOOL_CALL then TOOL_CALL_2, each whole in one delta without `index`, as
 *   Ollama before 0.4.7 and Gemini's OpenAI endpoint send them); `tools-index-zero` (the same two
 *   calls, both numbered 0, as Ollama's parallel calls are); `tools-untyped` (the `tools` call
 *   without its `type`, as Mistral's API sends it)
 * - `logprobs`: OK_TEXT with each piece's log probability (logprobsOf) on its choice, when the
 *   request asked for `logprobs` (null otherwise, as OpenAI does); `logprobs-ollama`: the same as
 *   Ollama's OpenAI-compatible endpoint sends them (ollamaLogprobsOf): no `top_logprobs` when none
 *   were asked for, and no `bytes` (its first versions; later ones leave out an empty token's)
 * - `firehose` (stream): FIREHOSE_CHUNKS chunks of 1 KiB of text, each written as soon as the
 *   connection takes it (waiting for 'drain' when it does not); FIREHOSE counts how far it got
 * - `early-usage-reset` (stream): EARLY_USAGE_TEXT in 3 chunks, the first carrying a usage of its
 *   own (EARLY_USAGE: 1 completion token, not cumulative), the others `usage: null`; then the
 *   connection is destroyed, before any final usage
 * - `early-usage-end` (stream): the same three chunks, then a finish chunk (`stop`) and `[DONE]`:
 *   the stream ends well, and its only usage is the stale one on its first chunk
 * - `early-then-final-usage` (stream): as `early-usage-end`, with a final usage chunk after the
 *   finish (FINAL_USAGE: fewer completion tokens than this repository's count of the text, as an
 *   upstream with another tokenizer may report)
 * - `agent`: a scripted tool-using turn for coding agents (agent-turn.ts)
 */
export const FAKE_OPENAI_KEY = "sk-fake-openai";
/** The `firehose` model's length, and how far its last answer got (chunks written, finished). */
export const FIREHOSE_CHUNKS = 40_000;
export const FIREHOSE = { written: 0, finished: false };
export const OK_TEXT = ["Hello", " there,", " friend."];
export const EARLY_USAGE_TEXT = [
  "Once",
  " upon a time there was a gateway",
  " that counted every token it sent.",
];
/** The usage `early-usage-reset` sends on its first chunk: that chunk's count alone. */
export const EARLY_USAGE = { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 };
/** The final usage `early-then-final-usage` sends after all of its text. */
export const FINAL_USAGE = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };
export const REASONING_TEXT = ["The user greets me.", " A short greeting back will do."];
export const REASONING_ANSWER = "Hi!";
export const PARTS_THINKING = ["Mistral thinks", " in parts."];
export const PARTS_TEXT = ["Bonjour", " à vous", "."];
export const TWO_CHOICES_SECOND = ["Good", " day", " to you."];
export const LLAMA_ERROR = "the request exceeds the available context size, try increasing it";
export const REFUSAL_TEXT = ["I'm sorry,", " I cannot help with that."];
export const REASONING_DETAILS = [
  { type: "reasoning.encrypted", data: "gAAAAB-opaque", format: "openai-responses-v1", index: 0 },
];

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

/** The `cache-write` model's usage: `ok`'s, with cache writes. */
const CACHE_WRITE_USAGE = {
  ...USAGE,
  prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 3, audio_tokens: 0 },
};

export const TOOL_CALL = {
  id: "call_abc",
  type: "function",
  function: { name: "get_weather", arguments: '{"city":"Paris"}' },
};

export const TOOL_CALL_2 = {
  id: "call_def",
  type: "function",
  function: { name: "get_weather", arguments: '{"city":"Rome"}' },
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

/**
 * Ollama's choice `logprobs` (`{"content": [api.Logprob]}`): each token's `token` and `logprob`
 * only, as it sends them for `logprobs: true` without `top_logprobs` (its Go fields are
 * `omitempty`), in the versions that sent no `bytes`.
 */
export function ollamaLogprobsOf(tokens: string[]): unknown {
  return { content: tokens.map((token) => ({ token, logprob: -0.25 })) };
}

/** OpenAI's choice `logprobs` for a text generated as these tokens. */
export function logprobsOf(tokens: string[]): unknown {
  const entry = (token: string) => ({ token, logprob: -0.25, bytes: [...Buffer.from(token)] });
  return {
    content: tokens.map((token) => ({ ...entry(token), top_logprobs: [entry(token)] })),
    refusal: null,
  };
}

function chunk(model: string, delta: unknown, finish: string | null = null, index = 0): unknown {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 1735689600,
    model,
    system_fingerprint: "fp_fake",
    choices: [{ index, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  };
}

/** The log probabilities a behaviour sends (when asked for), or null. */
const logprobsFor = (kind: string, tokens: string[]): unknown =>
  kind === "logprobs" ? logprobsOf(tokens) : kind === "logprobs-ollama" ? ollamaLogprobsOf(tokens) : null;

const thinkingPart = (text: string) => ({ type: "thinking", thinking: [{ type: "text", text }] });

/** The choices of a whole answer, by behaviour (`kind`: the model without `-no-usage`). */
function messages(kind: string): { message: unknown; finish_reason: string }[] {
  const stop = (message: Record<string, unknown>) => ({
    message: { role: "assistant", refusal: null, ...message },
    finish_reason: "stop",
  });
  switch (kind) {
    case "tools":
    case "tools-nulls":
      return [
        {
          message: { role: "assistant", content: null, refusal: null, tool_calls: [TOOL_CALL] },
          finish_reason: "tool_calls",
        },
      ];
    case "tools-untyped": {
      const { type: _type, ...untyped } = TOOL_CALL;
      return [
        {
          message: { role: "assistant", content: null, refusal: null, tool_calls: [untyped] },
          finish_reason: "tool_calls",
        },
      ];
    }
    case "tools-no-index":
    case "tools-index-zero":
      return [
        {
          message: { role: "assistant", content: null, refusal: null, tool_calls: [TOOL_CALL, TOOL_CALL_2] },
          finish_reason: "tool_calls",
        },
      ];
    case "reasoning":
      return [stop({ content: REASONING_ANSWER, reasoning_content: REASONING_TEXT.join("") })];
    case "parts":
      return [
        stop({
          content: [
            thinkingPart(PARTS_THINKING.join("")),
            ...PARTS_TEXT.map((text) => ({ type: "text", text })),
          ],
        }),
      ];
    case "two-choices":
      return [stop({ content: OK_TEXT.join("") }), stop({ content: TWO_CHOICES_SECOND.join("") })];
    case "refusal":
      return [stop({ content: null, refusal: REFUSAL_TEXT.join("") })];
    case "reasoning-details":
      return [
        stop({ content: OK_TEXT.join(""), reasoning: "Opaque.", reasoning_details: REASONING_DETAILS }),
      ];
    default:
      return [stop({ content: OK_TEXT.join("") })];
  }
}

async function handle(req: RecordedRequest, res: ServerResponse, socket: Socket): Promise<void> {
  const embeddingsPath = req.path === "/v1/embeddings";
  const responsesPath = req.path === "/v1/responses";
  if (!req.path.endsWith("/chat/completions") && !embeddingsPath && !responsesPath)
    return json(res, 404, { error: { message: "not found" } });
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
  if (embeddingsPath) return embeddings(res, req.body);
  if (responsesPath) return fakeResponses(res, req.body);
  if (model === "agent") return answerChat(res, req.body);
  const stream = req.body?.stream === true;
  const noUsage = model === "no-usage" || model.endsWith("-no-usage");
  const kind = noUsage ? model.slice(0, -"-no-usage".length) : model;
  const includeUsage = stream && req.body?.stream_options?.include_usage === true && !noUsage;
  const usage = model === "cache-write" ? CACHE_WRITE_USAGE : USAGE;

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
    return json(res, 200, {
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 1735689600,
      model,
      system_fingerprint: "fp_fake",
      choices: messages(kind).map((c, index) => ({
        index,
        ...c,
        logprobs: req.body?.logprobs === true ? logprobsFor(kind, OK_TEXT) : null,
      })),
      ...(noUsage ? {} : { usage }),
    });
  }

  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.flushHeaders();
  if (model === "slow-body") await sleep(400);
  if (model === "bad-json") return void res.end("data: {not json\n\n");
  const llamaError = (code: number) =>
    `error: ${JSON.stringify({ code, message: LLAMA_ERROR, type: "exceed_context_size_error" })}\n\n`;
  if (model === "llama-error") return void res.end(llamaError(400));
  if (model === "firehose") {
    FIREHOSE.written = 0;
    FIREHOSE.finished = false;
    const piece = `data: ${JSON.stringify(chunk(model, { content: "x".repeat(1024) }))}\n\n`;
    for (let i = 0; i < FIREHOSE_CHUNKS; i++) {
      if (res.destroyed) return;
      const taken = res.write(piece);
      FIREHOSE.written++;
      if (!taken) await new Promise((r) => (res.once("drain", r), res.once("close", r)));
    }
    sse(res, chunk(model, {}, "stop"));
    if (includeUsage) sse(res, { ...(chunk(model, {}) as object), choices: [], usage: USAGE });
    sse(res, "[DONE]");
    FIREHOSE.finished = true;
    return void res.end();
  }
  if (model === "early-usage-reset" || model === "early-usage-end" || model === "early-then-final-usage") {
    sse(res, {
      ...(chunk(model, { role: "assistant", content: EARLY_USAGE_TEXT[0] }) as object),
      usage: EARLY_USAGE,
    });
    for (const content of EARLY_USAGE_TEXT.slice(1)) sse(res, chunk(model, { content }));
    if (model === "early-usage-reset") return void setTimeout(() => socket.destroy(), 20);
    sse(res, chunk(model, {}, "stop"));
    if (model === "early-then-final-usage")
      sse(res, { ...(chunk(model, {}) as object), choices: [], usage: FINAL_USAGE });
    sse(res, "[DONE]");
    return void res.end();
  }
  // The `tools` call's first piece: its id, type and name, no arguments yet.
  const toolCallStart = () =>
    chunk(model, {
      role: "assistant",
      content: null,
      tool_calls: [{ index: 0, ...TOOL_CALL, function: { name: "get_weather", arguments: "" } }],
    });
  if (kind === "tools") {
    sse(res, toolCallStart());
    sse(res, chunk(model, { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
    sse(res, chunk(model, { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    sse(res, chunk(model, {}, "tool_calls"));
  } else if (kind === "tools-nulls") {
    sse(res, toolCallStart());
    for (const args of ['{"city":', '"Paris"}']) {
      const piece = { index: 0, id: null, type: null, function: { name: null, arguments: args } };
      sse(res, chunk(model, { content: null, tool_calls: [piece] }));
    }
    sse(res, chunk(model, {}, "tool_calls"));
  } else if (kind === "tools-no-index" || kind === "tools-index-zero") {
    const numbered = kind === "tools-index-zero" ? { index: 0 } : {};
    sse(res, chunk(model, { role: "assistant", content: "", tool_calls: [{ ...numbered, ...TOOL_CALL }] }));
    sse(res, chunk(model, { content: "", tool_calls: [{ ...numbered, ...TOOL_CALL_2 }] }));
    sse(res, chunk(model, {}, "tool_calls"));
  } else if (kind === "reasoning") {
    sse(res, chunk(model, { role: "assistant", content: null, reasoning_content: REASONING_TEXT[0] }));
    sse(res, chunk(model, { content: null, reasoning_content: REASONING_TEXT[1] }));
    sse(res, chunk(model, { content: REASONING_ANSWER, reasoning_content: null }));
    sse(res, chunk(model, {}, "stop"));
  } else if (kind === "parts") {
    // Mistral streams thinking as a list of parts, then the answer's text as parts or strings.
    sse(res, chunk(model, { role: "assistant", content: [thinkingPart(PARTS_THINKING[0]!)] }));
    sse(res, chunk(model, { content: [thinkingPart(PARTS_THINKING[1]!)] }));
    sse(res, chunk(model, { content: [{ type: "text", text: PARTS_TEXT[0] }] }));
    sse(res, chunk(model, { content: [{ type: "text", text: PARTS_TEXT[1] }] }));
    sse(res, chunk(model, { content: PARTS_TEXT[2] }));
    sse(res, chunk(model, {}, "stop"));
  } else if (kind === "refusal") {
    sse(res, chunk(model, { role: "assistant", content: null, refusal: REFUSAL_TEXT[0] }));
    sse(res, chunk(model, { refusal: REFUSAL_TEXT[1] }));
    sse(res, chunk(model, {}, "stop"));
  } else if (kind === "reasoning-details") {
    sse(res, chunk(model, { role: "assistant", reasoning: "Opaque.", reasoning_details: REASONING_DETAILS }));
    for (const content of OK_TEXT) sse(res, chunk(model, { content }));
    sse(res, chunk(model, {}, "stop"));
  } else if (kind === "logprobs" || kind === "logprobs-ollama") {
    OK_TEXT.forEach((content, i) => {
      const c = chunk(model, { ...(i === 0 ? { role: "assistant" } : {}), content }) as {
        choices: { logprobs: unknown }[];
      };
      if (req.body?.logprobs === true) c.choices[0]!.logprobs = logprobsFor(kind, [content]);
      sse(res, c);
    });
    sse(res, chunk(model, {}, "stop"));
  } else if (kind === "two-choices") {
    for (let i = 0; i < OK_TEXT.length; i++) {
      const role = i === 0 ? { role: "assistant" } : {};
      sse(res, chunk(model, { ...role, content: OK_TEXT[i] }, null, 0));
      sse(res, chunk(model, { ...role, content: TWO_CHOICES_SECOND[i] }, null, 1));
    }
    sse(res, chunk(model, {}, "stop", 0));
    sse(res, chunk(model, {}, "stop", 1));
  } else {
    sse(res, chunk(model, { role: "assistant", content: OK_TEXT[0], refusal: null }));
    if (model === "bad-json-late") return void res.end("data: {not json\n\n");
    if (model === "reset") return void setTimeout(() => socket.destroy(), 20);
    if (model === "never-ends") return neverEnd(res);
    if (model === "stall") return neverAnswer(res);
    if (model === "llama-error-late") return void res.end(llamaError(500));
    if (model === "in-band-error") {
      sse(res, { error: { message: "Upstream overloaded", code: 503 } });
      return void res.end();
    }
    sse(res, chunk(model, { content: OK_TEXT[1] }));
    sse(res, chunk(model, { content: OK_TEXT[2] }));
    sse(res, chunk(model, {}, "stop"));
  }
  if (includeUsage) sse(res, { ...(chunk(model, {}) as object), choices: [], usage });
  sse(res, "[DONE]");
  res.end();
}

/** Tokens of an embeddings input as the fake counts them: one per 4 characters, at least 1. */
export const fakeEmbeddingTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

/**
 * POST /v1/embeddings as OpenAI documents it: `{object: "list", data: [{object: "embedding",
 * index, embedding}], model, usage: {prompt_tokens, total_tokens}}`, floats (the gateway asks for
 * them). Each vector is 4 numbers (or `dimensions`): the input's length, then 1, 2, 3, …
 */
function embeddings(res: ServerResponse, body: Record<string, any>): void {
  const inputs: unknown[] = Array.isArray(body?.input) ? body.input : [body?.input];
  const texts = inputs.map((x) => (typeof x === "string" ? x : JSON.stringify(x)));
  const dims = typeof body?.dimensions === "number" ? body.dimensions : 4;
  const tokens = texts.reduce((n, t) => n + fakeEmbeddingTokens(t), 0);
  json(res, 200, {
    object: "list",
    data: texts.map((t, index) => ({
      object: "embedding",
      index,
      embedding: Array.from({ length: dims }, (_, i) => (i === 0 ? t.length : i)),
    })),
    model: String(body?.model),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

export function startFakeOpenAI(): Promise<FakeServer> {
  return startFakeServer(handle);
}
