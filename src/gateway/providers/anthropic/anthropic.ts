import { toAnthropicRequest } from "./anthropic-request.js";
import { AnthropicStream, fromAnthropicMessage } from "./anthropic-response.js";
import { malformed, notJson } from "../malformed.js";
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  joinUrl,
  type UpstreamEndpointOptions,
} from "../openai/openai-compatible.js";
import type { ProviderAdapter, UpstreamCall } from "../provider.js";
import { sseEvents } from "../sse-events.js";
import {
  createUpstreamPool,
  readWholeBody,
  sendUpstream,
  sentCredentials,
  withoutSecrets,
  type UpstreamExchange,
} from "../upstream-http.js";
import type { CancelSignal } from "../../cancellation.js";

/**
 * Anthropic's Messages API: POST {base}/v1/messages with `x-api-key` and
 * `anthropic-version: 2023-06-01`, translated both ways (anthropic-request.ts,
 * anthropic-response.ts). `baseUrl` is the API root (https://api.anthropic.com); a trailing
 * `/v1` is accepted too.
 */
export const ANTHROPIC_VERSION = "2023-06-01";

export function createAnthropicAdapter(opts: UpstreamEndpointOptions): ProviderAdapter {
  const pool = createUpstreamPool({
    idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    connections: opts.connections,
  });
  const url = joinUrl(opts.baseUrl.replace(/\/+$/, "").replace(/\/v1$/, ""), "/v1/messages");

  const send = (call: UpstreamCall, stream: boolean, signal: CancelSignal): Promise<UpstreamExchange> => {
    // Translation first: a request Anthropic cannot express fails before anything is sent.
    const body = JSON.stringify(toAnthropicRequest(call, stream));
    // The organization's own key (BYOK) when the attempt has one, else the provider's.
    const apiKey = call.apiKey ?? opts.apiKey;
    return sendUpstream(
      pool,
      {
        url,
        headers: {
          ...opts.headers,
          "content-type": "application/json",
          accept: stream ? "text/event-stream" : "application/json",
          "anthropic-version": ANTHROPIC_VERSION,
          // A native Messages request's betas (context management, …) go with it.
          ...(call.native?.kind === "anthropic" ? call.native.headers : {}),
          ...(apiKey !== null ? { "x-api-key": apiKey } : {}),
        },
        body,
        firstByteTimeoutMs: call.timeoutMs,
      },
      signal,
    );
  };

  return {
    async complete(call, signal) {
      try {
        const text = await readWholeBody(await send(call, false, signal));
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw notJson(text, false);
        }
        if (typeof parsed !== "object" || parsed === null) throw malformed("not a JSON object", false);
        return fromAnthropicMessage(parsed as Record<string, unknown>);
      } catch (err) {
        throw withoutSecrets(err, sentCredentials(call, opts));
      }
    },

    async *stream(call, signal) {
      try {
        const exchange = await send(call, true, signal);
        const state = new AnthropicStream();
        try {
          for await (const event of sseEvents(exchange, () => state.output)) {
            let data: unknown;
            try {
              data = JSON.parse(event.data);
            } catch {
              throw malformed(`event ${event.event ?? "(unnamed)"} is not JSON`, state.output);
            }
            if (typeof data !== "object" || data === null)
              throw malformed("an event is not a JSON object", state.output);
            const chunk = state.next(data as Record<string, unknown>);
            if (chunk) yield chunk;
            if (state.done) break;
          }
          if (!state.done) throw malformed("the stream ended before message_stop", state.output);
        } finally {
          exchange.close(state.done);
        }
      } catch (err) {
        throw withoutSecrets(err, sentCredentials(call, opts));
      }
    },

    async close() {
      await pool.close();
    },
  };
}
