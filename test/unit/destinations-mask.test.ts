import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maskConfig, maskSecret, maskUrl } from "../../src/domain/destinations/mask.js";

describe("maskSecret", () => {
  it("shows first 4 and last 4 of a secret of 16 or more characters", () => {
    expect(maskSecret("sk-lf-0123456789abAbCd")).toBe("sk-l...AbCd");
    expect(maskSecret("0123456789abcdef")).toBe("0123...cdef");
  });

  it("shows at most 2 trailing characters of a short secret, never more than a quarter", () => {
    expect(maskSecret("abcdefghijklmno")).toBe("****...no"); // 15
    expect(maskSecret("abcdefgh")).toBe("****...gh"); // 8
    expect(maskSecret("abcdefg")).toBe("****...g"); // 7
    expect(maskSecret("abcd")).toBe("****...d"); // 4
    expect(maskSecret("abc")).toBe("****...");
    expect(maskSecret("")).toBe("****");
  });

  it("property: a short secret reveals at most floor(len/4) characters; a long one at most 8", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 64 }), (s) => {
        const m = maskSecret(s);
        const revealed = m.replace(/^\*\*\*\*\.\.\./, "").replace("...", "");
        if (s.length < 16) {
          expect(m.startsWith("****...")).toBe(true);
          expect(revealed.length).toBeLessThanOrEqual(Math.floor(s.length / 4));
          expect(s.endsWith(revealed)).toBe(true);
        } else {
          expect(revealed.length).toBe(8);
        }
        if (s.length >= 4) expect(m).not.toBe(s);
      }),
    );
  });
});

describe("maskUrl", () => {
  it("masks userinfo and keeps the rest as stored", () => {
    expect(maskUrl("https://user:pass@ch.example.com:8123/db?x=1")).toBe(
      "https://****:****@ch.example.com:8123/db?x=1",
    );
    expect(maskUrl("https://token@otel.example.com")).toBe("https://****@otel.example.com");
    expect(maskUrl("https://otel.example.com:4318/v1")).toBe("https://otel.example.com:4318/v1");
    // An @ after the path does not count as userinfo.
    expect(maskUrl("https://h.example.com/a@b")).toBe("https://h.example.com/a@b");
  });
});

describe("maskConfig", () => {
  it("masks secret fields, URL credentials and every header value; leaves other fields", () => {
    const masked = maskConfig("clickhouse", {
      host: "https://admin:hunter2hunter2@ch.example.com",
      database: "db",
      username: "default",
      password: "ch-password-0123456789",
      table: "T",
      headers: { "X-Api-Key": "header-secret-0123456789", "X-Short": "abcdefgh" },
    });
    expect(masked).toEqual({
      host: "https://****:****@ch.example.com",
      database: "db",
      username: "default",
      password: "ch-p...6789",
      table: "T",
      headers: { "X-Api-Key": "head...6789", "X-Short": "****...gh" },
    });
  });

  it("masks the Sentry DSN as a whole (it is a credential)", () => {
    const m = maskConfig("sentry", {
      dsn: "https://abc123def456abc123@o1.ingest.sentry.io/42",
      otlpEndpoint: "https://o1.ingest.sentry.io/api/42/otlp",
    });
    expect(m.dsn).toBe("http...o/42");
    expect(m.otlpEndpoint).toBe("https://o1.ingest.sentry.io/api/42/otlp");
  });
});
