import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import fc from "fast-check";
import type { JsonSchema } from "./helpers.js";

// ajv-formats ships CommonJS; its default export arrives wrapped under NodeNext resolution.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** The same rules the app applies to bodies: strict types, formats checked. */
const ajv = addFormats(new Ajv({ strict: false, coerceTypes: false, allErrors: false }));
const compiled = new WeakMap<JsonSchema, ValidateFunction>();

/** Whether a value passes a JSON schema (bodies: no coercion). */
export function accepts(schema: JsonSchema, value: unknown): boolean {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v(value);
}

const deep = (depth: number): unknown => {
  let v: unknown = { a: 1 };
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};
const deepArray = (depth: number): unknown => {
  let v: unknown = [1];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

/** Values that are wrong for most fields: numbers as text, booleans as numbers, extremes, huge shapes. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    "10",
    "0",
    "NaN",
    "Infinity",
    "-Infinity",
    "-0",
    "1e308",
    "true",
    "false",
    "null",
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "😀",
    "2026-13-45T99:99:99Z",
    -0,
    0,
    1,
    -1,
    1.5,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER + 2,
    2 ** 63,
    1e-320,
    true,
    false,
    null,
    [],
    {},
    [null],
    { $gt: "" },
    { toString: "x" },
    "x".repeat(100_000),
    new Array(50_000).fill(0),
    new Array(2_000).fill("daily"),
    deep(500),
    deepArray(500),
  ),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.double(),
  fc.integer(),
  fc.jsonValue({ maxDepth: 3 }),
);

const wrongArbs = new WeakMap<JsonSchema, fc.Arbitrary<unknown>>();

/** The value as the server receives it: bodies travel as JSON (Infinity and NaN arrive as null). */
const asSent = (v: unknown): unknown => {
  const text = JSON.stringify(v);
  return text === undefined ? undefined : JSON.parse(text);
};

/** A value the field's schema refuses, once sent as JSON. */
export function wrongFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  let arb = wrongArbs.get(schema);
  if (!arb) {
    arb = nastyValue.filter((v) => !accepts(schema, asSent(v)));
    wrongArbs.set(schema, arb);
  }
  return arb;
}

const stringFor = (s: JsonSchema): fc.Arbitrary<string> => {
  if (s.format === "uuid") return fc.uuid({ version: 4 });
  if (s.format === "date-time")
    return fc.constantFrom("2099-01-01T00:00:00Z", "2100-06-30T12:30:45Z", "2099-12-31T23:59:59.5Z");
  const min: number = s.minLength ?? 0;
  const max: number = Math.min(s.maxLength ?? 40, min + 40);
  if (s.pattern) {
    // fast-check cannot generate from a lookahead: `^(?=A$)B$` (a text field's "no control
    // characters" guard, src/http/schemas/ingest.ts) is generated from B, then filtered by the
    // whole pattern, so every value still matches what the schema says.
    const pattern = new RegExp(s.pattern as string);
    const generating = new RegExp((s.pattern as string).replace(/^\^\(\?=.*?\$\)/, "^"));
    return fc
      .stringMatching(generating)
      .filter((x) => pattern.test(x) && x.length >= min && x.length <= (s.maxLength ?? Infinity));
  }
  return fc.string({ unit: "grapheme", minLength: Math.max(min, 1), maxLength: Math.max(max, 1) });
};

const validArbs = new WeakMap<JsonSchema, fc.Arbitrary<unknown>>();

/** A value the field's schema accepts (simple schema shapes: what TypeBox emits for this API). */
export function validFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  let arb = validArbs.get(schema);
  if (!arb) {
    arb = buildValid(schema).filter((v) => accepts(schema, v));
    validArbs.set(schema, arb);
  }
  return arb;
}

function buildValid(schema: JsonSchema): fc.Arbitrary<unknown> {
  const s = schema;
  let arb: fc.Arbitrary<unknown>;
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    arb = fc.oneof(...((s.anyOf ?? s.oneOf) as JsonSchema[]).map(validFor));
  } else if (Array.isArray(s.enum)) {
    arb = fc.constantFrom(...(s.enum as unknown[]));
  } else if ("const" in s) {
    arb = fc.constant(s.const);
  } else if (s.type === "string") {
    arb = stringFor(s);
  } else if (s.type === "integer") {
    arb = fc.integer({ min: s.minimum ?? -1000, max: Math.min(s.maximum ?? 1000, 2 ** 31 - 1) });
  } else if (s.type === "number") {
    const min: number = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 0.01 : -1000);
    const max: number = Math.min(s.maximum ?? 1000, min + 1000);
    arb = fc.oneof(
      fc.integer({ min: Math.ceil(min), max: Math.floor(max) }),
      fc.double({ min, max, noNaN: true }),
    );
  } else if (s.type === "boolean") {
    arb = fc.boolean();
  } else if (s.type === "null") {
    arb = fc.constant(null);
  } else if (s.type === "array") {
    const item = s.items ? validFor(s.items as JsonSchema) : fc.jsonValue({ maxDepth: 1 });
    arb = fc.array(item, { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 3, 3) });
  } else if (s.type === "object") {
    arb = objectFor(s);
  } else {
    arb = fc.jsonValue({ maxDepth: 2 });
  }
  return arb;
}

function objectFor(s: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries((s.properties ?? {}) as Record<string, JsonSchema>);
  if (props.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }));
  const required = new Set<string>((s.required ?? []) as string[]);
  return fc.record(Object.fromEntries(props.map(([k, v]) => [k, validFor(v)])), {
    requiredKeys: props.map(([k]) => k).filter((k) => required.has(k)),
  });
}

/**
 * A body with the route's field names where every field is left out, valid, or of a wrong type,
 * and at least one field is wrong: the schema refuses it, so the answer must be 400.
 */
const partlyWrongArbs = new WeakMap<JsonSchema, fc.Arbitrary<PartlyWrong>>();
export interface PartlyWrong {
  body: Record<string, unknown>;
  /** The fields with a wrong value. */
  wrong: string[];
}

export function partlyWrongBody(schema: JsonSchema): fc.Arbitrary<PartlyWrong> {
  let arb = partlyWrongArbs.get(schema);
  if (!arb) {
    arb = buildPartlyWrong(schema);
    partlyWrongArbs.set(schema, arb);
  }
  return arb;
}

function buildPartlyWrong(schema: JsonSchema): fc.Arbitrary<PartlyWrong> {
  const props = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>);
  const required = new Set<string>((schema.required ?? []) as string[]);
  const choices = props.map(([name, sub]) =>
    fc.oneof(
      fc.record({ kind: fc.constant("wrong" as const), value: wrongFor(sub) }),
      fc.record({ kind: fc.constant("valid" as const), value: validFor(sub) }),
      ...(required.has(name) ? [] : [fc.constant({ kind: "omit" as const, value: undefined })]),
    ),
  );
  return fc
    .tuple(...choices)
    .filter((cs) => cs.some((c) => c.kind === "wrong"))
    .map((cs) => {
      const body: Record<string, unknown> = {};
      const wrong: string[] = [];
      cs.forEach((c, i) => {
        const name = props[i]![0];
        if (c.kind !== "omit") body[name] = c.value;
        if (c.kind === "wrong") wrong.push(name);
      });
      return { body, wrong };
    });
}

/** Percent-encodes the UTF-8 bytes of any string (lone surrogates become U+FFFD like a client would send). */
export const encodeSegment = (s: string): string =>
  [...Buffer.from(s, "utf8")]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");

/**
 * A path segment for a path parameter: either raw text (percent-encoded here) or a literal segment
 * that is put into the URL as is (`..`, `%2F`, broken percent escapes).
 */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 30 }).map(encodeSegment),
  fc.string({ unit: "binary", maxLength: 30 }).map(encodeSegment),
  fc.string({ maxLength: 20 }).map(encodeSegment),
  fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => h.toUpperCase()),
  fc.stringMatching(/^[0-9a-f]{63}$/),
  fc.stringMatching(/^[0-9a-f]{65}$/),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => u.replace(/-/g, "")),
  fc.constantFrom(
    "",
    ".",
    "..",
    "...",
    "%2E%2E",
    "a%2Fb",
    "%2F",
    "..%2F..%2Fkeys",
    "%00",
    "a%00b",
    "%FF",
    "%C0%80",
    "%E0%A4%A",
    "%",
    "%zz",
    "%25",
    "+",
    "%20",
    "%3F",
    "%23",
    "null",
    "undefined",
    "0",
    "-1",
    "NaN",
    "DAILY",
    "Monthly",
    "lifetime%00",
    "daily%20",
    "%F0%9F%98%80",
    "a".repeat(10_240),
    encodeSegment("é".repeat(5_000)),
    "1e308",
    "__proto__",
    "constructor",
  ),
);

/** Authorization header values that never carry a valid key. */
export const badAuthorization = (validKeys: string[]): fc.Arbitrary<string> => {
  const key = fc.constantFrom(...validKeys);
  return fc.oneof(
    fc.string({ maxLength: 80 }).map((s) => `Bearer ${s}`),
    fc.string({ unit: "grapheme", maxLength: 40 }).map((s) => `Bearer ${s}`),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.stringMatching(/^sk-gh-v1-[0-9a-f]{64}$/).map((s) => `Bearer ${s}`),
    key.map((k) => `Basic ${Buffer.from(`${k}:`).toString("base64")}`),
    key.map((k) => `Token ${k}`),
    key.map((k) => k),
    key.map((k) => `Bearer ${k.toUpperCase()}`),
    key.map((k) => `Bearer ${k.slice(0, -1)}`),
    key.map((k) => `Bearer ${k}0`),
    key.map((k) => `Bearer ${k} ${k}`),
    key.map((k) => `Bearer"${k}"`),
    key.map((k) => `Bearer\u0000${k}`),
    key.map((k) => `Bearer ${k}\u0000`),
    fc.constantFrom(
      "Bearer",
      "Bearer ",
      "bearer",
      " ",
      "Bearer null",
      "Bearer undefined",
      `Bearer ${"x".repeat(10_240)}`,
      `Bearer ${"é".repeat(50_000)}`,
      "x".repeat(100_000),
      "Bearer sk-gh-v1-ÿÿÿÿ",
      "Bearer 😀",
      "Negotiate abc",
      "Digest username=x",
    ),
  );
};
