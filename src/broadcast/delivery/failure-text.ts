import { RefusedAddressError } from "./address-guard.js";
import type { SendResult } from "./http-send.js";

/** The longest receiver text shown (public receivers only), after its secrets are masked. */
export const MAX_EXCERPT = 200;

const TLS_CODES =
  /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_|HOSTNAME_MISMATCH|EPROTO$|ERR_OSSL)/;
const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME", "ESERVFAIL"]);

/**
 * Gatehouse's own name for a failed connection, in place of the socket's message: a raw
 * `ECONNREFUSED 10.0.0.5:6379` or "socket hang up" would tell a tenant which ports of which hosts
 * answer. The refusal of a private address keeps its own text (it names the URL's host only).
 */
export function failureClass(err: Error): string {
  if (err instanceof RefusedAddressError) return err.message;
  const code = (err as NodeJS.ErrnoException).code ?? "";
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ECONNRESET" || code === "EPIPE" || code === "ECONNABORTED") return "connection reset";
  if (code === "ETIMEDOUT" || code === "ESOCKETTIMEDOUT") return "timed out";
  if (DNS_CODES.has(code)) return "DNS lookup failed";
  if (TLS_CODES.test(code)) return "TLS error";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EHOSTDOWN" || code === "ENETDOWN") {
    return "network unreachable";
  }
  return "network error";
}

/**
 * What a failed send is shown as (the test operation's `error`, `last_error`, dead letters):
 * without an answer, the classification; with one, `HTTP <status>` and, from a public receiver,
 * at most MAX_EXCERPT characters of its body with the destination's secrets masked (`mask`, run on
 * the whole text first so that no secret is cut in two). A 3xx says it was not followed.
 */
export function failureText(r: SendResult, mask: (text: string) => string): string {
  if (r.status === null) return r.text;
  if (r.status >= 300 && r.status < 400) return `HTTP ${r.status} (redirects are not followed)`;
  const excerpt = r.text === "" ? "" : mask(r.text);
  if (excerpt === "") return `HTTP ${r.status}`;
  return `HTTP ${r.status}: ${excerpt.length > MAX_EXCERPT ? `${excerpt.slice(0, MAX_EXCERPT)}…` : excerpt}`;
}
