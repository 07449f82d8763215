import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GENERATION_FIELDS, MIN_CREATED_AT_MS, MAX_FUTURE_MS } from "../../src/activity/generation-fields.js";
import { parseRecords, Problems } from "../../src/domain/ingest/records/validate-generations.js";
import { validatorCompiler } from "../../src/http/validation.js";
import { MAX_USD } from "../../src/lib/money.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";

/**
 * The generation record's schema as the app publishes it (GET /api/v1/openapi.json), compiled by
 * the app's own Ajv (http/validation.ts), and the ingest validator agree on random records, valid
 * and invalid: the record schema and the validator are both generated from one field table, and
 * this proves the generation kept them equal. The one check JSON Schema cannot state is the
 * created_at range relative to the server clock (2000-01-01 .. now + 24 h); the oracle applies it.
 */
const NOW_MS = Date.parse("2026-11-20T12:00:00Z");

let t: TestApp;
let schemaValid: (record: unknown) => boolean;

beforeAll(async () => {
  t = await makeTestApp();
  const doc = (await t.call({ method: "GET", url: "/api/v1/openapi.json", auth: null })).json();
  const body = doc.paths["/activity/generations"].post.requestBody.content["application/json"].schema;
  const recordSchema = body.properties.generations.items;
  const validate = validatorCompiler({
    schema: recordSchema,
    method: "POST",
    url: "/activity/generations",
    httpPart: "body",
  }) as (data: unknown) => boolean;
  schemaValid = (record) => validate(knownFieldsOf(record));
});
afterAll(() => t?.close());

const KNOWN = new Set<string>(GENERATION_FIELDS.map((f) => f.wire));

/**
 * The record without the fields it does not define. Ingest ignores those whatever they hold
 * (docs/generation-record.md), so the app's edge check for the NUL character, which the oracle's
 * validator adds to the schema, must not look at them either.
 */
const knownFieldsOf = (record: unknown): unknown =>
  typeof record === "object" && record !== null && !Array.isArray(record)
    ? Object.fromEntries(Object.entries(record).filter(([k]) => KNOWN.has(k)))
    : record;

const validatorValid = (record: unknown): boolean => {
  const problems = new Problems();
  parseRecords([record], NOW_MS, problems);
  return problems.total === 0;
};

/** The created_at range, the check beyond the schema (only for strings that are timestamps). */
const createdAtInRange = (record: unknown): boolean => {
  const c = (record as { created_at?: unknown } | null)?.created_at;
  if (typeof c !== "string") return true;
  const ms = Date.parse(c);
  return Number.isNaN(ms) || (ms >= MIN_CREATED_AT_MS && ms <= NOW_MS + MAX_FUTURE_MS);
};

const CHARS = [
  "a",
  "Z",
  "0",
  "9",
  " ",
  "/",
  "-",
  "_",
  ".",
  "é",
  "中",
  "\u0001",
  "\n",
  "\u007f",
  "\u0000",
  "\t",
];
/** Text from a small alphabet that includes control characters (rarely) and non-ASCII letters. */
const text = (min: number, max: number) =>
  fc
    .array(
      fc.oneof({ weight: 30, arbitrary: fc.constantFrom(...CHARS.slice(0, 11)) }, fc.constantFrom(...CHARS)),
      {
        minLength: min,
        maxLength: max,
      },
    )
    .map((cs) => cs.join(""));

const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
const timestamp = fc
  .tuple(
    fc.integer({ min: MIN_CREATED_AT_MS, max: NOW_MS + MAX_FUTURE_MS }),
    fc.constantFrom("Z", "+00:00", "+05:30", "-08:00"),
    fc.constantFrom("", ".1", ".123", ".123456789"),
  )
  .map(([ms, offset, frac]) => {
    const sign = offset === "Z" ? 0 : offset.startsWith("-") ? -1 : 1;
    const shift = sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6))) * 60_000;
    const local = new Date(ms + shift).toISOString().slice(0, 19);
    return `${local}${frac}${offset}`;
  });

/** A valid value for each field, drawn by its check type. */
function validValue(f: (typeof GENERATION_FIELDS)[number]): fc.Arbitrary<unknown> {
  const c = f.check;
  switch (c.type) {
    case "text":
      if (c.pattern?.message.includes("hex")) return hex64;
      if (c.pattern?.message.includes("permaslug"))
        return fc.constantFrom("openai/gpt-4o", "a/b:free", "x/y/z");
      if (c.pattern?.message.includes("API name"))
        return fc.constantFrom("chat", "responses", "messages", "embeddings", null);
      if (c.pattern) return fc.constantFrom("US", "de", "Fr");
      return f.required ? text(1, Math.min(c.max, 12)) : fc.oneof(text(0, 12), fc.constant(null));
    case "timestamp":
      return timestamp;
    case "uuid":
      return fc.oneof(
        fc.uuid(),
        fc.uuid().map((u) => u.toUpperCase()),
        fc.constant(null),
      );
    case "integer":
      return fc.oneof(fc.integer({ min: c.min, max: 1_000_000 }), fc.constant(Number.MAX_SAFE_INTEGER));
    case "usd":
      return fc.double({ min: c.signed ? -MAX_USD : 0, max: MAX_USD, noNaN: true, noDefaultInfinity: true });
    case "millis":
      return fc.double({ min: 0, max: 1e7, noNaN: true, noDefaultInfinity: true });
    case "flag":
      return fc.boolean();
    case "classifications":
      return fc.array(
        fc.record({
          classifier_id: fc.uuid(),
          dimension_name: fc.constantFrom("topic", "a_b2", "x".repeat(64)),
          value: text(1, 8),
        }),
        { maxLength: 3 },
      );
  }
}

/** Values that break one rule or another (or none: some are valid for some fields). */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    null,
    "",
    -1,
    0,
    1,
    1.5,
    -0.5,
    2 ** 53,
    2 ** 60,
    MAX_USD + 1,
    -MAX_USD - 1,
    "2026-02-30T10:00:00Z",
    "2024-02-29T10:00:00Z",
    "2026-11-18T10:00Z",
    "2026-11-18 10:00:00Z",
    "2026-11-18t10:00:00z",
    "2026-11-18T10:00:00",
    "1999-12-31T23:59:59Z",
    "2030-01-01T00:00:00Z",
    "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
    "openai gpt",
    "USA",
    "u",
    "00000000-0000-4000-8000-00000000000g",
    "urn:uuid:00000000-0000-4000-8000-000000000000",
    [{ classifier_id: "x", dimension_name: "Topic", value: "" }],
    Array.from({ length: 101 }, () => ({
      classifier_id: "00000000-0000-4000-8000-000000000000",
      dimension_name: "t",
      value: "v",
    })),
    "x".repeat(129),
    "x".repeat(257),
    "x".repeat(1025),
  ),
  text(0, 40),
);

/** A valid record, then a few fields removed or replaced by odd values. */
const record = fc
  .tuple(
    fc.record(Object.fromEntries(GENERATION_FIELDS.map((f) => [f.wire, validValue(f)]))),
    fc.array(
      fc.tuple(
        fc.constantFrom(...GENERATION_FIELDS.map((f) => f.wire), "unknown_field"),
        fc.option(oddValue, { nil: undefined }),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([base, edits]) => {
    const r: Record<string, unknown> = { ...base };
    for (const [wire, v] of edits) {
      if (v === undefined) delete r[wire];
      else r[wire] = v;
    }
    return r;
  });

describe("the published generation record schema and the ingest validator", () => {
  it("agree on random records, valid and invalid", () => {
    let valid = 0;
    let invalid = 0;
    fc.assert(
      fc.property(record, (r) => {
        const bySchema = schemaValid(r) && createdAtInRange(r);
        expect({ record: r, valid: validatorValid(r) }).toEqual({ record: r, valid: bySchema });
        if (bySchema) valid += 1;
        else invalid += 1;
      }),
      { numRuns: 1_000 },
    );
    // Both sides of the question were asked often.
    expect(valid).toBeGreaterThan(100);
    expect(invalid).toBeGreaterThan(100);
  });

  it("a NUL character in a field the record does not define is ignored like the field; in a defined one it is refused", () => {
    const ok = {
      id: "gen-1",
      created_at: "2026-11-20T11:00:00Z",
      api_key_hash: "a".repeat(64),
      model: "openai/gpt-4o",
      provider: "openai",
      tokens_prompt: 1,
      tokens_completion: 1,
      usage: 0.001,
      latency_ms: 120,
    };
    expect(validatorValid(ok)).toBe(true);
    expect(validatorValid({ ...ok, unknown_field: "x\u0000y" })).toBe(true);
    expect(schemaValid({ ...ok, unknown_field: "x\u0000y" })).toBe(true);
    expect(validatorValid({ ...ok, provider: "open\u0000ai" })).toBe(false);
    expect(schemaValid({ ...ok, provider: "open\u0000ai" })).toBe(false);
  });

  it("agree on values that are not records", () => {
    for (const v of [null, [], "x", 1, true, [{}]]) expect(schemaValid(v)).toBe(validatorValid(v));
  });
});
