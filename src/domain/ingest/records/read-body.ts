import { parse as secureJsonParse } from "secure-json-parse";
import { DomainError, invalid } from "../../errors.js";
import { nestsTooDeep, TOO_DEEP, tooDeepPath } from "./nesting.js";
import { MAX_RECORDS, UnparsableLine } from "./validate-generations.js";

/* A request body → its list of records (not yet checked), with the envelope's own problems. */

/**
 * What arrives: a request body not yet parsed (its bytes, UTF-8, or text), or records already
 * parsed (CLI import, tests).
 */
export type IngestInput =
  | { format: "json" | "ndjson"; text: string | Uint8Array }
  | { format: "records"; records: readonly unknown[] };

/** Bytes → text as Fastify decodes a body (invalid sequences become U+FFFD; a BOM is kept). */
const textOf = (body: string | Uint8Array): string =>
  typeof body === "string"
    ? body
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");

/** One record per line; blank lines are skipped; a line that is not JSON is reported as its record's problem. */
export function parseNdjson(text: string): unknown[] {
  const records: unknown[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    if (records.length === MAX_RECORDS) {
      throw new DomainError("payload_too_large", `generations: at most ${MAX_RECORDS} records per request`);
    }
    try {
      records.push(JSON.parse(line));
    } catch {
      records.push(new UnparsableLine(i + 1));
    }
  }
  if (records.length === 0) throw invalid("generations: at least 1 record");
  return records;
}

/** `{"generations": [...]}` → the list, or the problem with the envelope itself. */
export function recordsOf(body: unknown): unknown[] {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("body: must be a JSON object");
  // The records are checked one by one (validate-generations.ts); the body's other fields here.
  for (const k in body) {
    const v = (body as Record<string, unknown>)[k];
    if (k !== "generations" && typeof v === "object" && v !== null && nestsTooDeep(v, 2))
      throw invalid(`${k}${tooDeepPath(v, 2)}: ${TOO_DEEP}`);
  }
  const g = (body as { generations?: unknown }).generations;
  if (g === undefined) throw invalid("generations: is required");
  if (!Array.isArray(g)) throw invalid("generations: must be an array");
  if (g.length === 0) throw invalid("generations: at least 1 record");
  if (g.length > MAX_RECORDS) {
    throw new DomainError("payload_too_large", `generations: at most ${MAX_RECORDS} records per request`);
  }
  return g;
}

/**
 * A JSON body as Fastify's own parser reads it (secure-json-parse, refusing `__proto__` and
 * `constructor.prototype` keys), with the same answers for an empty or unparsable body.
 */
function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw invalid("body: must be a JSON object (the body is empty)");
  try {
    return secureJsonParse(text, { protoAction: "error", constructorAction: "error" });
  } catch {
    throw invalid("body: is not valid JSON");
  }
}

export function recordsOfInput(input: IngestInput): readonly unknown[] {
  switch (input.format) {
    case "records":
      return input.records;
    case "ndjson":
      return parseNdjson(textOf(input.text));
    case "json":
      return recordsOf(parseJsonBody(textOf(input.text)));
  }
}
