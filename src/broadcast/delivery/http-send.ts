import http from "node:http";
import https from "node:https";
import type { OutboundPolicy } from "../../lib/outbound-policy.js";
import { isPrivateAddress } from "../../lib/special-addresses.js";
import type { EncodedRequest } from "../encoders/encoder.js";
import { guardedLookup, RefusedAddressError } from "./address-guard.js";
import { failureClass } from "./failure-text.js";

export interface SendResult {
  /** HTTP status, or null when no response came (network error, timeout, refused address). */
  status: number | null;
  /** Retry-After in milliseconds, when the receiver sent one. */
  retryAfterMs: number | null;
  /**
   * With a response: the start of its body, only when the address connected to is globally
   * reachable ("" from a private receiver: its body never leaves Gatehouse). Without one:
   * Gatehouse's own classification of what went wrong (failure-class.ts), never the socket's text.
   */
  text: string;
  latencyMs: number;
  /** The request was refused before sending (private address): not worth retrying. */
  refused: boolean;
}

export interface SendOptions {
  timeoutMs: number;
  /** Which addresses may be connected to (BROADCAST_REFUSE_PRIVATE_ADDRESSES and its allowlist). */
  addresses: OutboundPolicy;
}

/**
 * An idle keep-alive connection is closed after this long (undici's default), or sooner when the
 * receiver's `Keep-Alive: timeout=N` says it closes first (Node applies the hint, minus 1 s, only
 * below the agent's own timeout: without one, idle sockets stayed open for good and were reused
 * just as the receiver closed them, a spurious "socket hang up").
 */
export const IDLE_SOCKET_MS = 4_000;
const KEEP_ALIVE = { keepAlive: true, maxSockets: 16, timeout: IDLE_SOCKET_MS };
const plainAgents = { plain: new http.Agent(KEEP_ALIVE), tls: new https.Agent(KEEP_ALIVE) };
/** Agents whose connections resolve through a policy's guarded lookup (one pair per policy). */
const guardedAgents = new WeakMap<OutboundPolicy, typeof plainAgents>();

function agentsOf(policy: OutboundPolicy): typeof plainAgents {
  if (!policy.refusePrivate) return plainAgents;
  let agents = guardedAgents.get(policy);
  if (agents === undefined) {
    const lookup = guardedLookup(policy);
    agents = {
      plain: new http.Agent({ ...KEEP_ALIVE, lookup } as http.AgentOptions),
      tls: new https.Agent({ ...KEEP_ALIVE, lookup } as https.AgentOptions),
    };
    guardedAgents.set(policy, agents);
  }
  return agents;
}

const MAX_TEXT = 2_048;

/** Retry-After as seconds or an HTTP date → milliseconds from now (null when absent or unreadable). */
export function retryAfterMs(value: string | undefined, nowMs: number): number | null {
  if (value === undefined || value.trim() === "") return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1_000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * Sends one request with a time limit for the whole exchange (connect, send, response body).
 * Never throws: failures are results. Keep-alive connections are reused across batches.
 */
export function sendRequest(req: EncodedRequest, opts: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const done = (r: Omit<SendResult, "latencyMs">): SendResult => ({
    ...r,
    latencyMs: Math.round((performance.now() - started) * 10) / 10,
  });
  return new Promise<SendResult>((resolve) => {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      resolve(done({ status: null, retryAfterMs: null, text: "invalid destination URL", refused: true }));
      return;
    }
    const tls = url.protocol === "https:";
    // A literal IP is connected to without a lookup: checked here (WHATWG URL has normalised
    // 127.1, 2130706433, 0x7f000001 and [::ffff:127.0.0.1] already). Names: the guarded lookup.
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (!opts.addresses.allowsHost(host)) {
      resolve(
        done({
          status: null,
          retryAfterMs: null,
          text: new RefusedAddressError(host).message,
          refused: true,
        }),
      );
      return;
    }
    const agent = tls ? agentsOf(opts.addresses).tls : agentsOf(opts.addresses).plain;
    const body = typeof req.body === "string" ? Buffer.from(req.body, "utf8") : req.body;
    const headers: Record<string, string | number> = { ...req.headers, "content-length": body.byteLength };
    let settled = false;
    const finish = (r: Omit<SendResult, "latencyMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(r));
    };
    let timedOut = false;
    const broken = (err: Error) => (timedOut ? `timed out after ${opts.timeoutMs} ms` : failureClass(err));
    // Redirects are never followed (node:http does not): a 3xx is reported as it came.
    const request = (tls ? https : http).request(url, { method: req.method, headers, agent }, (res) => {
      // The address actually connected to: a private one (the operator allowed it) never has its
      // body kept, so it can never be shown back (failure-text.ts).
      const remote = res.socket.remoteAddress;
      const publicReceiver = remote !== undefined && !isPrivateAddress(remote);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        if (publicReceiver && size < MAX_TEXT) chunks.push(c);
        size += c.length;
      });
      res.on("end", () =>
        finish({
          status: res.statusCode ?? null,
          retryAfterMs: retryAfterMs(res.headers["retry-after"], Date.now()),
          text: Buffer.concat(chunks).toString("utf8").slice(0, MAX_TEXT),
          refused: false,
        }),
      );
      res.on("error", (err) =>
        finish({ status: null, retryAfterMs: null, text: broken(err), refused: false }),
      );
    });
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error("timed out"));
    }, opts.timeoutMs);
    request.on("error", (err) =>
      finish({
        status: null,
        retryAfterMs: null,
        text: broken(err),
        refused: err instanceof RefusedAddressError,
      }),
    );
    request.end(body);
  });
}

/**
 * Whether a failed attempt is worth retrying (docs/wire-compatibility.md "Broadcast retry rules"): no
 * response, 408, 409, 425, 429 and 5xx are; other answers (4xx: the receiver refuses the payload
 * or the credentials) are dead-lettered at once.
 */
export function retryable(r: SendResult): boolean {
  if (r.refused) return false;
  if (r.status === null) return true;
  return r.status === 408 || r.status === 409 || r.status === 425 || r.status === 429 || r.status >= 500;
}

export const succeeded = (r: SendResult): boolean => r.status !== null && r.status >= 200 && r.status < 300;
