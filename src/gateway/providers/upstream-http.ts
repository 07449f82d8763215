import type { IncomingHttpHeaders } from "node:http";
import { Agent, request, type Dispatcher } from "undici";
import { UpstreamError, UpstreamTimeout } from "./provider.js";

/**
 * The HTTP side shared by the adapters: one keep-alive pool per provider, a first-byte deadline,
 * cancellation by AbortSignal, and every transport or HTTP failure mapped to UpstreamError.
 *
 * Retryable (the gateway may try the next model or provider, if nothing reached the client):
 * 408, 409, 425, 429, every 5xx (incl. Anthropic's 529), timeouts, refused or reset connections.
 * Everything else (400, 401, 403, 404, 422, …) is the request's or the account's fault: trying
 * another provider with the same request would not help, so it is not retryable.
 */
const RETRYABLE_STATUS = new Set([408, 409, 425, 429]);
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || RETRYABLE_STATUS.has(status);
}

/** Largest upstream error body read to find its message; the rest is discarded. */
const MAX_ERROR_BODY = 64 * 1024;

export interface UpstreamPoolOptions {
  /** Connections kept per upstream origin. */
  connections?: number;
  /** Silence allowed between two body chunks once the answer has started. */
  idleTimeoutMs: number;
}

/** One provider's keep-alive connections; close() (at shutdown) ends them. */
export interface UpstreamPool {
  agent: Agent;
  idleTimeoutMs: number;
  close(): Promise<void>;
}

export function createUpstreamPool(opts: UpstreamPoolOptions): UpstreamPool {
  const agent = new Agent({
    connections: opts.connections ?? 128,
    keepAliveTimeout: 30_000,
    // The first-byte deadline is ours (below), so undici's own header deadline is off.
    headersTimeout: 0,
    bodyTimeout: opts.idleTimeoutMs,
  });
  return { agent, idleTimeoutMs: opts.idleTimeoutMs, close: () => agent.close() };
}

export interface UpstreamRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Deadline for the first byte of the answer (headers, then the first body chunk). */
  firstByteTimeoutMs: number;
}

/** An answer whose status was 2xx; its body is still to be read. */
export interface UpstreamExchange {
  status: number;
  headers: IncomingHttpHeaders;
  body: Dispatcher.ResponseData["body"];
  /** Stops the first-byte deadline: call it when the first body chunk arrives. */
  firstByte(): void;
  /** A failure while reading the body, as an UpstreamError. */
  failure(err: unknown): UpstreamError;
  /**
   * Ends the exchange: clears the deadline and detaches from the signal. An unread rest of the
   * body is drained when `complete` (the answer's last event was read: the connection can be
   * reused), else destroyed, which closes the connection: that is how cancellation reaches the
   * upstream.
   */
  close(complete?: boolean): void;
}

/**
 * Sends the request. Resolves with the 2xx answer; throws UpstreamError for a non-2xx answer
 * (its body's message, Retry-After), a timeout, a connection failure or the caller's abort
 * (status null, not retryable: the caller asked to stop).
 */
export async function sendUpstream(
  pool: UpstreamPool,
  req: UpstreamRequest,
  signal: AbortSignal,
): Promise<UpstreamExchange> {
  const ac = new AbortController();
  let timedOut = false;
  const onAbort = (): void => ac.abort(signal.reason);
  if (signal.aborted) throw cancelled();
  signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new Error("first-byte timeout"));
  }, req.firstByteTimeoutMs);

  let body: Dispatcher.ResponseData["body"] | null = null;
  let closed = false;
  const failure = (err: unknown): UpstreamError => {
    if (err instanceof UpstreamError) return err;
    if (timedOut) return new UpstreamTimeout("first-byte", req.firstByteTimeoutMs);
    if (signal.aborted) return cancelled();
    return transportError(err, pool.idleTimeoutMs);
  };
  const close = (complete = false): void => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    if (!body || body.readableEnded) return;
    if (complete && !signal.aborted) body.dump({ limit: MAX_ERROR_BODY }).catch(() => undefined);
    else body.destroy();
  };

  try {
    const res = await request(req.url, {
      dispatcher: pool.agent,
      method: "POST",
      headers: req.headers,
      body: req.body,
      signal: ac.signal,
    });
    body = res.body;
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await readCapped(res.body);
      throw new UpstreamError(
        `upstream answered ${res.statusCode}: ${errorMessage(text)}`,
        res.statusCode,
        isRetryableStatus(res.statusCode),
        retryAfterMs(res.headers),
      );
    }
    return {
      status: res.statusCode,
      headers: res.headers,
      body: res.body,
      firstByte: () => clearTimeout(timer),
      failure,
      close,
    };
  } catch (err) {
    close();
    throw failure(err);
  }
}

/**
 * Reads a non-streamed answer's whole body, then ends the exchange. The headers have come, so the
 * first-byte deadline stops; the body is bounded by the idle timeout, and a failure while reading
 * it is an UpstreamError.
 */
export async function readWholeBody(exchange: UpstreamExchange): Promise<string> {
  try {
    exchange.firstByte();
    try {
      return await exchange.body.text();
    } catch (err) {
      throw exchange.failure(err);
    }
  } finally {
    exchange.close();
  }
}

function cancelled(): UpstreamError {
  return new UpstreamError("upstream request cancelled", null, false);
}

function transportError(err: unknown, idleTimeoutMs: number): UpstreamError {
  const code = (err as { code?: unknown } | null)?.code;
  const what = typeof code === "string" ? code : err instanceof Error ? err.message : String(err);
  if (code === "UND_ERR_BODY_TIMEOUT") return new UpstreamTimeout("idle", idleTimeoutMs);
  return new UpstreamError(`upstream connection failed (${what})`, null, true);
}

async function readCapped(body: Dispatcher.ResponseData["body"]): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    parts.push(chunk);
    size += chunk.length;
    if (size >= MAX_ERROR_BODY) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(parts).subarray(0, MAX_ERROR_BODY).toString("utf8");
}

/**
 * The human message of an upstream error body, whatever its dialect: OpenAI and Anthropic
 * (`error.message`), Ollama (`error` as a string), vLLM/FastAPI (`detail`), or the raw text.
 */
export function errorMessage(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text.trim().slice(0, 300) || "(empty body)";
  }
  const o = (parsed ?? {}) as Record<string, unknown>;
  const err = o.error;
  if (typeof err === "string") return err.slice(0, 300);
  if (err && typeof err === "object") {
    const m = (err as Record<string, unknown>).message;
    if (typeof m === "string") return m.slice(0, 300);
  }
  if (typeof o.message === "string") return o.message.slice(0, 300);
  if (typeof o.detail === "string") return o.detail.slice(0, 300);
  return text.trim().slice(0, 300);
}

/** `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date; null when absent. */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | null {
  const ms = headerValue(headers["retry-after-ms"]);
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const v = headerValue(headers["retry-after"]);
  if (v === null) return null;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function headerValue(v: string | string[] | undefined): string | null {
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined ? null : s.trim();
}
