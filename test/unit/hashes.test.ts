import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/broadcast/encoders/ids.js";
import { appIdOf } from "../../src/gateway/recording/served-generation.js";
import { hashKey } from "../../src/lib/ids.js";

/** The stored and derived hashes: SHA-256 of the UTF-8 text, as a Hash object computes it. */
describe("SHA-256 of keys and identifiers", () => {
  const texts = ["", "abc", "sk-gh-v1-" + "0f".repeat(32), "é ☃ 𝄞 \u0000 end", "x".repeat(10_000)];

  it("hashKey: lowercase hex SHA-256 of the key's UTF-8 bytes (FIPS 180-2 vector, and as a Hash object)", () => {
    expect(hashKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    for (const t of texts) expect(hashKey(t)).toBe(createHash("sha256").update(t, "utf8").digest("hex"));
  });

  it("sha256Hex (Broadcast ids): the same digest", () => {
    for (const t of texts) expect(sha256Hex(t)).toBe(createHash("sha256").update(t, "utf8").digest("hex"));
  });

  it("appIdOf: the first 48 bits of the referer's (else the title's) digest; null without either", () => {
    const expected = (t: string) => createHash("sha256").update(t, "utf8").digest().readUIntBE(0, 6);
    expect(appIdOf("https://app.example.com/", "Title")).toBe(expected("https://app.example.com/"));
    expect(appIdOf(null, "My App é")).toBe(expected("My App é"));
    expect(appIdOf(null, null)).toBeNull();
  });
});
