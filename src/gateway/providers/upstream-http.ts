import type { IncomingHttpHeaders } from "node:http";
import { Agent, type Dispatcher } from "undici";
import { UpstreamBody } from "./upstream-body.js";
import { looksLikeHtml } from "./malformed.js";
import { UpstreamCancelled, UpstreamError, UpstreamTimeout } from "./provider.js";
import { redactCredentials } from "../../lib/credential-text.js";
import type { CancelSignal } from "../cancellation.js";

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

/** Connections per provider unless its providers-file entry says otherwise (`connections`). */
export const DEFAULT_UPSTREAM_CONNECTIONS = 128;

export interface UpstreamPoolOptions {
  /** Connections kept per upstream origin (default DEFAULT_UPSTREAM_CONNECTIONS). */
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
    connections: opts.connections ?? DEFAULT_UPSTREAM_CONNECTIONS,
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
  body: UpstreamBody;
  /** Stops the first-byte deadline: call it when the first body chunk arrives. */
  firstByte(): void;
  /** A failure while reading the body, as an UpstreamError. */
  failure(err: unknown): UpstreamError;
  /**
   * Ends the exchange: clears the deadline and detaches from the signal. An unread rest of the
   * body is drained when `complete` (the answer's last event was read: the connection can be
   * reused), else the request is aborted, which closes the connection: that is how cancellation
   * reaches the upstream.
   */
  close(complete?: boolean): void;
}

/**
 * Sends the request. Resolves with the 2xx answer; rejects with UpstreamError for a non-2xx answer
 * (its body's message, Retry-After), a timeout, a connection failure or the caller's abort
 * (UpstreamCancelled: not retryable, the caller asked to stop). A timeout's or an abort's error
 * says whether the request had been written to the provider by then (`sent`).
 */
export function sendUpstream(
  pool: UpstreamPool,
  req: UpstreamRequest,
  signal: CancelSignal,
): Promise<UpstreamExchange> {
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<UpstreamExchange>((resolve, reject) => {
    const call = new UpstreamCallHandler(pool.idleTimeoutMs, req.firstByteTimeoutMs, signal, resolve, reject);
    const { origin, path } = targetOf(req.url);
    try {
      pool.agent.dispatch({ origin, path, method: "POST", headers: req.headers, body: req.body }, call);
    } catch (err) {
      call.onResponseError(null, err as Error);
    }
  });
}

const targets = new Map<string, { origin: string; path: string }>();

/** An adapter's endpoint URL split as undici's dispatch takes it (a handful of URLs: remembered). */
function targetOf(url: string): { origin: string; path: string } {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    t = { origin: u.origin, path: u.pathname + u.search };
    if (targets.size < 1_000) targets.set(url, t);
  }
  return t;
}

/**
 * One request on undici's dispatcher, as its handler: undici's `request()` wraps the same
 * dispatch in an AbortSignal and a Node stream per request, which cost more CPU than the HTTP
 * exchange itself on a loopback upstream (docs/performance.md). This class is also the exchange
 * handed to the adapter once a 2xx status arrives.
 */
class UpstreamCallHandler implements Dispatcher.DispatchHandler, UpstreamExchange {
  status = 0;
  headers: IncomingHttpHeaders = {};
  readonly body: UpstreamBody;
  private controller: Dispatcher.DispatchController | null = null;
  /** Why the request was stopped before undici handed over its controller. */
  private abortedEarly: Error | null = null;
  private timer: NodeJS.Timeout | null;
  private timedOut = false;
  /** The request was written on a connection (onRequestStart): the provider has it. */
  private sent = false;
  private closed = false;
  /** The promise of sendUpstream is resolved or rejected. */
  private answered = false;
  /** A non-2xx answer's body, read up to MAX_ERROR_BODY. */
  private errorParts: Buffer[] | null = null;
  private errorBytes = 0;
  private readonly onAbort = (): void => this.abort(new Error("cancelled by the caller"));

  constructor(
    private readonly idleTimeoutMs: number,
    private readonly firstByteTimeoutMs: number,
    private readonly signal: CancelSignal,
    private readonly resolve: (x: UpstreamExchange) => void,
    private readonly reject: (err: UpstreamError) => void,
  ) {
    this.body = new UpstreamBody({
      pause: () => this.controller?.pause(),
      resume: () => this.controller?.resume(),
      abort: (reason) => this.abort(reason),
    });
    signal.addEventListener("abort", this.onAbort, { once: true });
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.abort(new Error("first-byte timeout"));
    }, firstByteTimeoutMs);
  }

  /**
   * Undici calls this once the request has a connected socket, just before it writes it there: a
   * request body given as a string is written whole, in the same tick (client-h1's writeBuffer),
   * so from here on the provider has the prompt. (The handler API that has this hook forwards no
   * `onRequestSent`.) A refused connection, or a request still waiting for a pooled connection,
   * never gets here.
   */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortedEarly) controller.abort(this.abortedEarly);
    else this.sent = true;
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.answered) return; // 1xx: informational, the answer follows
    this.status = statusCode;
    this.headers = headers;
    if (statusCode >= 300) {
      this.errorParts = [];
      return;
    }
    this.answered = true;
    this.resolve(this);
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.errorParts) {
      this.errorParts.push(chunk);
      this.errorBytes += chunk.length;
      // Enough to find the message: the rest is not read, and the connection goes.
      if (this.errorBytes >= MAX_ERROR_BODY) {
        this.rejectWithStatus();
        this.abort(new Error("upstream error body too large"));
      }
      return;
    }
    this.body.push(chunk);
  }

  onResponseEnd(): void {
    if (this.errorParts) this.rejectWithStatus();
    else this.body.end();
    this.detach();
  }

  onResponseError(_c: Dispatcher.DispatchController | null, err: Error): void {
    this.detach();
    if (!this.answered) {
      this.answered = true;
      this.reject(this.failure(err));
    } else this.body.fail(err);
  }

  firstByte(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  failure(err: unknown): UpstreamError {
    if (err instanceof UpstreamError) return err;
    const failure = this.timedOut
      ? new UpstreamTimeout("first-byte", this.firstByteTimeoutMs)
      : this.signal.aborted
        ? cancelled()
        : transportError(err, this.idleTimeoutMs);
    failure.sent = this.sent;
    return failure;
  }

  close(complete = false): void {
    if (this.closed) return;
    this.closed = true;
    this.detach();
    if (this.body.settled) return;
    if (complete && !this.signal.aborted) this.body.drain(MAX_ERROR_BODY);
    else this.abort(new Error("upstream exchange closed"));
  }

  /** Stops the request; a request not yet on a connection is failed now, not once it gets one. */
  private abort(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else if (!this.abortedEarly) {
      this.abortedEarly = reason;
      this.onResponseError(null, reason);
    }
  }

  /** The deadline and the signal no longer concern this request. */
  private detach(): void {
    this.firstByte();
    this.signal.removeEventListener("abort", this.onAbort);
  }

  private rejectWithStatus(): void {
    if (this.answered) return;
    this.answered = true;
    const text = Buffer.concat(this.errorParts ?? [])
      .subarray(0, MAX_ERROR_BODY)
      .toString("utf8");
    this.reject(
      new UpstreamError(
        `upstream answered ${this.status}: ${errorMessage(text)}`,
        this.status,
        isRetryableStatus(this.status),
        retryAfterMs(this.headers),
      ),
    );
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
  return new UpstreamCancelled();
}

function transportError(err: unknown, idleTimeoutMs: number): UpstreamError {
  const code = (err as { code?: unknown } | null)?.code;
  const what = typeof code === "string" ? code : err instanceof Error ? err.message : String(err);
  if (code === "UND_ERR_BODY_TIMEOUT") return new UpstreamTimeout("idle", idleTimeoutMs);
  return new UpstreamError(`upstream connection failed (${what})`, null, true);
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
    if (looksLikeHtml(text)) return "an HTML page, not an error message (from a proxy in between?)";
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

/** What a call sends as credentials (its key, else the provider's, and the extra header values). */
export function sentCredentials(
  call: { apiKey?: string },
  opts: { apiKey: string | null; headers?: Record<string, string> },
): (string | null)[] {
  return [call.apiKey ?? opts.apiKey, ...Object.values(opts.headers ?? {})];
}

/** Shorter values are not searched for (a header such as `x-version: 1` is not a credential). */
const MIN_SECRET_LENGTH = 8;

/**
 * An upstream failure as the client and the log may see it: its message quotes what the upstream
 * wrote (an error body, an error event), and some upstreams echo the credential they were sent
 * ("Incorrect API key provided: …"). Every value sent as a credential (the call's key, the
 * platform's or the organization's own, and the provider's extra header values) and any
 * credential-shaped text are replaced with `[redacted]`. Anything else is returned as it is.
 */
export function withoutSecrets(err: unknown, secrets: readonly (string | null | undefined)[]): unknown {
  // A timeout's and a cancellation's messages are Gatehouse's own.
  if (!(err instanceof UpstreamError) || err instanceof UpstreamTimeout || err instanceof UpstreamCancelled)
    return err;
  let message = err.message;
  for (const secret of secrets) {
    if (typeof secret === "string" && secret.length >= MIN_SECRET_LENGTH)
      message = message.split(secret).join("[redacted]");
  }
  message = redactCredentials(message);
  if (message === err.message) return err;
  const redacted = new UpstreamError(message, err.status, err.retryable, err.retryAfterMs);
  redacted.sent = err.sent;
  return redacted;
}
