import type { ServerResponse } from "node:http";
import { sse, startFakeServer, type FakeServer, type RecordedRequest } from "./fake-server.js";

/**
 * One local OpenAI-compatible upstream standing in for several providers, one per path prefix
 * (`<url>/<name>/v1`, the `base_url` of provider `<name>` in a providers file). Each provider
 * answers as its current mode says (or as the mode set for the key it was sent with, which wins),
 * so a test can make the first provider of a model, or one credential, fail and watch the gateway
 * move to the next; every request is recorded with its provider name and its Authorization header
 * (which credential the gateway used). Any key is accepted.
 *
 * An answer is "Served by <name>." with usage USAGE, streamed (three chunks, then the usage chunk
 * when the request asked for it, then `[DONE]`) or not.
 */
export type UpstreamMode = "ok" | 400 | 401 | 429 | 500 | 503;

export const USAGE = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 };

export interface RoutedRequest {
  provider: string;
  authorization: string | undefined;
  model: string;
  stream: boolean;
  raw: RecordedRequest;
}

export interface RoutedUpstream {
  server: FakeServer;
  /** The base_url of provider `name`. */
  baseUrl(name: string): string;
  /** How provider `name` answers from now on ("ok" unless set). */
  setMode(name: string, mode: UpstreamMode): void;
  /** How requests sent with `Authorization: Bearer <secret>` are answered, whatever the provider. */
  setKeyMode(secret: string, mode: UpstreamMode): void;
  /** Every provider back to "ok", the request log emptied. */
  reset(): void;
  /** Requests received since the last reset, in arrival order. */
  requests(): RoutedRequest[];
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const ERRORS: Record<Exclude<UpstreamMode, "ok">, string> = {
  400: "invalid_request_error",
  401: "invalid_api_key",
  429: "rate_limit_exceeded",
  500: "server_error",
  503: "service_unavailable",
};

export async function startRoutedUpstream(): Promise<RoutedUpstream> {
  const modes = new Map<string, UpstreamMode>();
  const keyModes = new Map<string, UpstreamMode>();
  let log: RoutedRequest[] = [];
  const server = await startFakeServer((req, res) => {
    const m = /^\/([a-z0-9_-]+)\/v1\/chat\/completions$/.exec(req.path);
    if (!m) return json(res, 404, { error: { message: "not found" } });
    const provider = m[1] as string;
    const model = String(req.body?.model);
    const stream = req.body?.stream === true;
    log.push({ provider, authorization: req.headers.authorization, model, stream, raw: req });
    const mode = keyModes.get(req.headers.authorization ?? "") ?? modes.get(provider) ?? "ok";
    if (mode !== "ok") {
      return json(res, mode, { error: { message: `${provider} failed with ${mode}`, code: ERRORS[mode] } });
    }
    const text = ["Served ", "by ", `${provider}.`];
    const base = { id: `chatcmpl-${provider}`, created: 1735689600, model, system_fingerprint: null };
    if (!stream) {
      return json(res, 200, {
        ...base,
        object: "chat.completion",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: text.join(""), refusal: null },
            logprobs: null,
            finish_reason: "stop",
          },
        ],
        usage: USAGE,
      });
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const chunk = (delta: unknown, finish: string | null = null) => ({
      ...base,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    });
    text.forEach((t, i) => sse(res, chunk(i === 0 ? { role: "assistant", content: t } : { content: t })));
    sse(res, chunk({}, "stop"));
    if (req.body?.stream_options?.include_usage === true) {
      sse(res, { ...chunk({}), choices: [], usage: USAGE });
    }
    sse(res, "[DONE]");
    res.end();
  });
  return {
    server,
    baseUrl: (name) => `${server.url}/${name}/v1`,
    setMode: (name, mode) => void modes.set(name, mode),
    setKeyMode: (secret, mode) => void keyModes.set(`Bearer ${secret}`, mode),
    reset: () => {
      modes.clear();
      keyModes.clear();
      log = [];
    },
    requests: () => [...log],
    close: () => server.close(),
  };
}
