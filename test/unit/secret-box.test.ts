import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SecretBox, loadEncryptionKey } from "../../src/lib/secret-box.js";

const box = new SecretBox(Buffer.alloc(32, 3));
const AAD = "destination:7b0c0d2e";

/** Flips one character of the base64url field at `index` of a sealed value. */
function tamper(sealed: string, index: number): string {
  const parts = sealed.split(".");
  const field = parts[index]!;
  const flipped = field[0] === "A" ? "B" : "A";
  parts[index] = flipped + field.slice(1);
  return parts.join(".");
}

describe("SecretBox", () => {
  it("round-trips text, including empty and non-ASCII", () => {
    for (const secret of ["", "sk-lf-1234", "pässwörd ✓ 秘密", "x".repeat(10_000)]) {
      expect(box.open(box.seal(secret, AAD), AAD)).toBe(secret);
    }
  });

  it("uses a fresh IV: the same plaintext seals differently each time", () => {
    const a = box.seal("same", AAD);
    const b = box.seal("same", AAD);
    expect(a).not.toBe(b);
    expect(a.startsWith("v1.")).toBe(true);
    expect(a).not.toContain("same");
  });

  it("detects tampering with the IV, the tag or the ciphertext", () => {
    const sealed = box.seal("a secret value", AAD);
    for (const index of [1, 2, 3]) expect(() => box.open(tamper(sealed, index), AAD)).toThrow();
  });

  it("fails with another aad (a ciphertext copied to another record)", () => {
    const sealed = box.seal("a secret value", AAD);
    expect(() => box.open(sealed, "destination:other")).toThrow();
  });

  it("fails with another key", () => {
    const sealed = box.seal("a secret value", AAD);
    expect(() => new SecretBox(Buffer.alloc(32, 4)).open(sealed, AAD)).toThrow();
  });

  it("refuses unknown formats and wrong key sizes", () => {
    expect(() => box.open("v2.a.b.c", AAD)).toThrow(/unrecognised/);
    expect(() => box.open("plain text", AAD)).toThrow(/unrecognised/);
    expect(() => new SecretBox(Buffer.alloc(16))).toThrow(/32 bytes/);
  });
});

describe("loadEncryptionKey", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), "gh-key-"));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("uses the configured key and writes no file", () => {
    const dir = tempDir();
    const configured = Buffer.alloc(32, 9);
    expect(loadEncryptionKey(configured, dir)).toBe(configured);
    expect(() => statSync(join(dir, "encryption.key"))).toThrow();
  });

  it("generates a key file readable only by its owner, then reuses it", () => {
    const dir = join(tempDir(), "nested", "data");
    const first = loadEncryptionKey(null, dir);
    expect(first).toHaveLength(32);
    const file = join(dir, "encryption.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, "utf8").trim(), "base64")).toEqual(first);

    const second = loadEncryptionKey(null, dir);
    expect(second).toEqual(first);
    // A value sealed under the first load opens under the second (a restart keeps secrets readable).
    const sealed = new SecretBox(first).seal("kept", AAD);
    expect(new SecretBox(second).open(sealed, AAD)).toBe("kept");
  });

  it("refuses a key file that does not hold 32 bytes", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "encryption.key"), Buffer.alloc(8).toString("base64"));
    expect(() => loadEncryptionKey(null, dir)).toThrow(/32 bytes/);
  });
});
