import { hash, randomBytes, randomUUID } from "node:crypto";

export const KEY_PREFIX = "sk-gh-v1-";
export const HASH_RE = /^[0-9a-f]{64}$/;
/** The shape of every key Gatehouse makes (newKeyString). */
export const KEY_RE = /^sk-gh-v1-[0-9a-f]{64}$/;
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const newId = (): string => randomUUID();

/** A new API key string: prefix + 64 lowercase hex characters of CSPRNG output. */
export const newKeyString = (): string => KEY_PREFIX + randomBytes(32).toString("hex");

/**
 * The stored identifier of a key: lowercase hex SHA-256 of the full key string (UTF-8). Every
 * authenticated request computes it: the one-shot `hash` takes half the CPU of a Hash object
 * (bench/experiments/per-request.ts).
 */
export const hashKey = (key: string): string => hash("sha256", key, "hex");

/** The display label of a key: first 12 characters + "..." + last 4. */
export const keyLabel = (key: string): string => `${key.slice(0, 12)}...${key.slice(-4)}`;
