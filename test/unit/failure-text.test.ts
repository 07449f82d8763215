import { describe, expect, it } from "vitest";
import { failureClass, failureText, MAX_EXCERPT } from "../../src/broadcast/delivery/failure-text.js";
import type { SendResult } from "../../src/broadcast/delivery/http-send.js";
import { maskErrorText } from "../../src/broadcast/delivery/mask-error.js";
import { RefusedAddressError } from "../../src/broadcast/delivery/address-guard.js";
import { configFor, planted } from "../helpers/destination-configs.js";

const result = (status: number | null, text: string): SendResult => ({
  status,
  text,
  retryAfterMs: null,
  latencyMs: 1,
  refused: false,
});
const errno = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("failureClass: Gatehouse's words for a failed connection, never the socket's", () => {
  it.each([
    ["ECONNREFUSED", "connect ECONNREFUSED 10.0.0.5:6379", "connection refused"],
    ["ECONNRESET", "socket hang up", "connection reset"],
    ["EPIPE", "write EPIPE", "connection reset"],
    ["ETIMEDOUT", "connect ETIMEDOUT 10.0.0.5:22", "timed out"],
    ["ENOTFOUND", "getaddrinfo ENOTFOUND db.internal", "DNS lookup failed"],
    ["EAI_AGAIN", "getaddrinfo EAI_AGAIN db.internal", "DNS lookup failed"],
    ["DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate", "TLS error"],
    [
      "ERR_TLS_CERT_ALTNAME_INVALID",
      "Hostname/IP does not match certificate's altnames: IP: 10.0.0.5",
      "TLS error",
    ],
    ["ERR_SSL_WRONG_VERSION_NUMBER", "wrong version number", "TLS error"],
    ["EHOSTUNREACH", "connect EHOSTUNREACH 10.0.0.5:443", "network unreachable"],
    ["EWHATEVER", "something at 10.0.0.5:443", "network error"],
  ])("%s", (code, message, expected) => {
    expect(failureClass(errno(code, message))).toBe(expected);
  });

  it("a refused address keeps its own text (the URL's host, nothing resolved)", () => {
    expect(failureClass(new RefusedAddressError("db.internal"))).toBe(
      "refused: db.internal is a private address (BROADCAST_REFUSE_PRIVATE_ADDRESSES)",
    );
  });
});

describe("failureText", () => {
  const config = configFor("langfuse");
  const mask = (t: string) => maskErrorText(t, "langfuse", config);
  const secretKey = planted("langfuse", "secretKey");

  it("a private receiver's answer (no text kept): the status alone", () => {
    expect(failureText(result(500, ""), mask)).toBe("HTTP 500");
  });

  it("a public receiver's answer: at most 200 characters, the secrets masked before the cut", () => {
    const body = `${"x".repeat(MAX_EXCERPT - 10)} key=${secretKey} ${"y".repeat(1_000)}`;
    const text = failureText(result(401, body), mask);
    expect(text.startsWith("HTTP 401: xxxx")).toBe(true);
    expect(text.length).toBeLessThanOrEqual("HTTP 401: ".length + MAX_EXCERPT + 1);
    expect(text).not.toContain(secretKey.slice(0, 12));
    expect(text).not.toContain("yyyy");
  });

  it("a redirect is reported, not followed; no answer is the classification", () => {
    expect(failureText(result(302, ""), mask)).toBe("HTTP 302 (redirects are not followed)");
    expect(failureText(result(null, "connection refused"), mask)).toBe("connection refused");
  });
});
