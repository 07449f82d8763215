import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * AES-256-GCM envelope for secrets at rest. The output is `v1.<iv>.<tag>.<ciphertext>` in base64url.
 * `aad` binds a ciphertext to its record (a ciphertext copied to another row will not decrypt).
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error("encryption key must be 32 bytes");
  }

  seal(plaintext: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(aad, "utf8"));
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    const tag = cipher.getAuthTag();
    return ["v1", iv.toString("base64url"), tag.toString("base64url"), ct.toString("base64url")].join(".");
  }

  open(sealed: string, aad: string): string {
    const [version, iv, tag, ct] = sealed.split(".");
    if (version !== "v1" || iv === undefined || tag === undefined || ct === undefined) {
      throw new Error("unrecognised ciphertext format");
    }
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  }
}

/**
 * The data key: GATEHOUSE_ENCRYPTION_KEY when set, otherwise a key file generated on first start in
 * the data directory (mode 0600). Several instances must share GATEHOUSE_ENCRYPTION_KEY.
 */
export function loadEncryptionKey(configured: Buffer | null, dataDir: string): Buffer {
  if (configured) return configured;
  const file = join(dataDir, "encryption.key");
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
    if (key.length !== 32) throw new Error(`${file}: must hold 32 bytes encoded as base64`);
    return key;
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString("base64") + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return key;
}
