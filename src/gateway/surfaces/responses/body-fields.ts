import { invalid, type DomainError } from "../../../domain/errors.js";

/**
 * Readers for a Responses request's fields. Each refuses a value of the wrong type with a 400
 * whose message starts with the field's path (`input[2].content[0].text: must be a string`), so
 * a client sees exactly what to fix. Absent and `null` read as undefined: the Responses body
 * makes almost every field nullable, and null means "not set".
 */
import { isObject, type Json } from "../../../lib/json-object.js";

export { isObject, type Json };

export const refuse = (path: string, problem: string): DomainError => invalid(`${path}: ${problem}`);

const has = (v: unknown): boolean => v !== undefined && v !== null;

export function optString(o: Json, k: string, path: string, max?: number): string | undefined {
  const v = o[k];
  if (!has(v)) return undefined;
  if (typeof v !== "string") throw refuse(path, "must be a string");
  if (max !== undefined && (v.length === 0 || v.length > max)) {
    throw refuse(path, `must be a string of 1 to ${max} characters`);
  }
  return v;
}

export function reqString(o: Json, k: string, path: string): string {
  const v = optString(o, k, path);
  if (v === undefined) throw refuse(path, "required");
  return v;
}

export function optNumber(
  o: Json,
  k: string,
  path: string,
  min = -Infinity,
  max = Infinity,
): number | undefined {
  const v = o[k];
  if (!has(v)) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) throw refuse(path, "must be a number");
  if (v < min || v > max) throw refuse(path, `must be a number from ${min} to ${max}`);
  return v;
}

export function optInt(o: Json, k: string, path: string, min: number, max?: number): number | undefined {
  const v = optNumber(o, k, path);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min || (max !== undefined && v > max)) {
    throw refuse(
      path,
      `must be an integer of at least ${min}${max !== undefined ? ` and at most ${max}` : ""}`,
    );
  }
  return v;
}

/** A list of strings, each of 1 to `max` characters. */
export function optStrings(o: Json, k: string, path: string, max: number): string[] | undefined {
  const list = optArray(o, k, path);
  if (!list) return undefined;
  return list.map((v, i) => {
    if (typeof v !== "string" || v.length === 0 || v.length > max) {
      throw refuse(`${path}[${i}]`, `must be a string of 1 to ${max} characters`);
    }
    return v;
  });
}

export function optBool(o: Json, k: string, path: string): boolean | undefined {
  const v = o[k];
  if (!has(v)) return undefined;
  if (typeof v !== "boolean") throw refuse(path, "must be true or false");
  return v;
}

export function optObject(o: Json, k: string, path: string): Json | undefined {
  const v = o[k];
  if (!has(v)) return undefined;
  if (!isObject(v)) throw refuse(path, "must be an object");
  return v;
}

export function optArray(o: Json, k: string, path: string): unknown[] | undefined {
  const v = o[k];
  if (!has(v)) return undefined;
  if (!Array.isArray(v)) throw refuse(path, "must be a list");
  return v as unknown[];
}

/** A string field limited to `allowed`. */
export function optEnum<T extends string>(
  o: Json,
  k: string,
  path: string,
  allowed: readonly T[],
): T | undefined {
  const v = optString(o, k, path);
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) {
    throw refuse(path, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`);
  }
  return v as T;
}
