import type { ErrorObject } from "ajv";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import {
  fieldPath,
  findBadValue,
  findNul,
  formatValidationErrors,
  MAX_JSON_DEPTH,
  validatorCompiler,
} from "../../src/http/validation.js";

/** Validates with the app's own compiler and returns the message a client would see. */
function messageFor(
  schema: unknown,
  value: unknown,
  httpPart: "body" | "querystring" = "body",
): string | null {
  const validate = validatorCompiler({ schema, httpPart, method: "POST", url: "/x" }) as unknown as {
    (v: unknown): boolean;
    errors?: ErrorObject[] | null;
  };
  if (validate(value)) return null;
  return formatValidationErrors(validate.errors ?? [], httpPart);
}

describe("fieldPath", () => {
  it.each([
    ["", undefined, ""],
    ["", "limit", "limit"],
    ["/limit", undefined, "limit"],
    ["/filters/3/value", undefined, "filters[3].value"],
    ["/filters/0", "field", "filters[0].field"],
    ["/dimensions/12", undefined, "dimensions[12]"],
    ["/a~1b/c~0d", undefined, "a/b.c~d"],
    ["/0/name", undefined, "[0].name"],
  ])("%j + %j → %j", (path, child, expected) => {
    expect(fieldPath(path, child)).toBe(expected);
  });
});

describe("formatValidationErrors", () => {
  const body = Type.Object({
    name: Type.String({ minLength: 1, maxLength: 5 }),
    limit: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    reset: Type.Optional(Type.Union([Type.Literal("daily"), Type.Literal("weekly")])),
    mode: Type.Optional(Type.Enum(["a", "b"])),
    tags: Type.Optional(Type.Array(Type.String({ pattern: "^[a-z]+$" }), { minItems: 1, maxItems: 2 })),
    filters: Type.Optional(Type.Array(Type.Object({ field: Type.String(), value: Type.String() }))),
    at: Type.Optional(Type.String({ format: "date-time" })),
  });

  it("names a missing field", () => {
    expect(messageFor(body, {})).toBe("name: is required");
    expect(messageFor(body, { name: "a", filters: [{ value: "x" }] })).toBe("filters[0].field: is required");
  });

  it("names the field and the expected type, without coercion in bodies", () => {
    expect(messageFor(body, { name: 5 })).toBe("name: must be string");
    expect(messageFor(body, { name: "a", filters: [{ field: "f", value: 1 }] })).toBe(
      "filters[0].value: must be string",
    );
  });

  it("merges the branches of a type union into one sentence", () => {
    expect(messageFor(body, { name: "a", limit: "10" })).toBe("limit: must be number or null");
  });

  it("lists every literal of a union, once, whatever the wrong value's type", () => {
    expect(messageFor(body, { name: "a", reset: "hourly" })).toBe("reset: must be one of daily, weekly");
    expect(messageFor(body, { name: "a", reset: 5 })).toBe("reset: must be one of daily, weekly");
    const nullable = Type.Object({ r: Type.Union([Type.Literal("a"), Type.Literal("b"), Type.Null()]) });
    expect(messageFor(nullable, { r: "c" })).toBe("r: must be one of a, b");
  });

  it("describes lengths, items, patterns, enums and formats", () => {
    expect(messageFor(body, { name: "" })).toBe("name: at least 1 character");
    expect(messageFor(body, { name: "abcdef" })).toBe("name: at most 5 characters");
    expect(messageFor(body, { name: "a", tags: [] })).toBe("tags: at least 1 item");
    expect(messageFor(body, { name: "a", tags: ["a", "b", "c"] })).toBe("tags: at most 2 items");
    expect(messageFor(body, { name: "a", tags: ["A"] })).toBe("tags[0]: must match ^[a-z]+$");
    expect(messageFor(body, { name: "a", mode: "c" })).toBe("mode: must be one of a, b");
    expect(messageFor(body, { name: "a", at: "yesterday" })).toBe("at: must be a valid date-time");
  });

  it("names the part when the whole value is wrong", () => {
    expect(messageFor(body, "text")).toBe("body: must be object");
    expect(messageFor(Type.Object({ n: Type.Integer() }), 5, "querystring")).toBe(
      "querystring: must be object",
    );
  });

  it("coerces query strings but not bodies", () => {
    const q = Type.Object({ limit: Type.Integer({ minimum: 1 }) });
    expect(messageFor(q, { limit: "10" }, "querystring")).toBeNull();
    expect(messageFor(q, { limit: "ten" }, "querystring")).toBe("limit: must be integer");
    expect(messageFor(q, { limit: "10" }, "body")).toBe("limit: must be integer");
  });

  it("falls back to a generic message without errors", () => {
    expect(formatValidationErrors([], "body")).toBe("Invalid request");
  });
});

describe("findNul: where a body holds U+0000 (PostgreSQL text cannot store it)", () => {
  it.each([
    [{ a: "ok", b: ["x", { c: "y\u0000z" }] }, "/b/1/c"],
    [{ a: { "k\u0000": 1 } }, "/a/k\u0000"],
    [["a", "b", "\u0000"], "/2"],
    [{ "a/b": { "c~d": "\u0000" } }, "/a~1b/c~0d"],
    ["\u0000", ""],
  ])("%j → %j", (body, pointer) => {
    expect(findNul(body)).toBe(pointer);
  });

  it("null when nothing holds it, whatever the shape", () => {
    for (const body of [
      null,
      1,
      true,
      "text",
      [],
      {},
      { a: [1, "two", { three: null }], "\\u0000": "\\u0000" },
    ])
      expect(findNul(body)).toBeNull();
  });

  it("the first in document order when several do, down to the deepest nesting allowed", () => {
    expect(findNul({ a: { b: "\u0000" }, c: "\u0000" })).toBe("/a/b");
    let deep: unknown = "\u0000";
    for (let i = 0; i < MAX_JSON_DEPTH; i++) deep = [deep];
    expect(findNul(deep)).toBe("/0".repeat(MAX_JSON_DEPTH));
    expect(findNul({ k: deep })).toBeNull(); // one level more: refused for its depth first
  });
});

/** `inner` wrapped in `levels` arrays (or objects `{"a": ...}`). */
function nest(levels: number, inner: unknown = 1, objects = false): unknown {
  let v = inner;
  for (let i = 0; i < levels; i++) v = objects ? { a: v } : [v];
  return v;
}

describe(`findBadValue: nesting deeper than ${MAX_JSON_DEPTH} levels`, () => {
  it("the body itself is level 1; exactly the limit passes, one more is refused", () => {
    expect(MAX_JSON_DEPTH).toBe(128);
    for (const objects of [false, true]) {
      expect(findBadValue(nest(MAX_JSON_DEPTH, 1, objects))).toBeNull();
      expect(findBadValue(nest(MAX_JSON_DEPTH, [], objects))).toMatchObject({ keyword: "depth" });
      expect(findBadValue(nest(MAX_JSON_DEPTH, {}, objects))).toMatchObject({ keyword: "depth" });
      // Scalars and empty strings at the limit are no level of their own.
      expect(findBadValue(nest(MAX_JSON_DEPTH, "x", objects))).toBeNull();
      expect(findBadValue(nest(MAX_JSON_DEPTH - 1, {}, objects))).toBeNull();
    }
    expect(findBadValue({ a: [{}] })).toBeNull();
    for (const scalar of [null, 1, true, "text"]) expect(findBadValue(scalar)).toBeNull();
  });

  it("far past the call stack, arrays and objects alike", () => {
    for (const objects of [false, true]) {
      const bad = findBadValue(nest(200_000, 1, objects));
      expect(bad).toMatchObject({ keyword: "depth", params: { limit: MAX_JSON_DEPTH } });
    }
  });

  it("names the first few segments of the path, without the indices that end them", () => {
    const chat = {
      messages: [{ role: "user", content: [{ type: "input_audio", x: nest(20_000) }] }],
    };
    expect(findBadValue(chat)?.instancePath).toBe("/messages/0/content/0/x");
    const tool = { tools: [{ type: "function", function: { parameters: nest(300, 1, true) } }] };
    expect(findBadValue(tool)?.instancePath).toBe("/tools/0/function/parameters/a/a/a/a");
    expect(findBadValue(nest(MAX_JSON_DEPTH + 1))?.instancePath).toBe("");
    expect(findBadValue({ "a/b": nest(MAX_JSON_DEPTH) })?.instancePath).toBe("/a~1b");
    const long = "k".repeat(1000);
    expect(findBadValue({ [long]: nest(MAX_JSON_DEPTH) })?.instancePath).toBe(`/${"k".repeat(64)}…`);
    const emoji = `${"k".repeat(63)}${"😀".repeat(10)}`;
    expect(findBadValue({ [emoji]: nest(MAX_JSON_DEPTH) })?.instancePath).toBe(`/${"k".repeat(63)}…`);
  });

  it("the first problem in document order, a NUL or a depth", () => {
    expect(findBadValue({ a: "\u0000", b: nest(500) })).toMatchObject({ keyword: "nul", instancePath: "/a" });
    expect(findBadValue({ b: nest(500), a: "\u0000" })).toMatchObject({
      keyword: "depth",
      instancePath: "/b",
    });
    expect(findBadValue({ a: nest(MAX_JSON_DEPTH - 1, "\u0000") })).toMatchObject({ keyword: "nul" });
  });

  it("is a 400 message that names the field, for bodies and query strings", () => {
    const body = Type.Object({ messages: Type.Array(Type.Object({}, { additionalProperties: true })) });
    const deep = { messages: [{ role: "user", content: [{ type: "input_audio", x: nest(20_000) }] }] };
    expect(messageFor(body, deep)).toBe(
      `messages[0].content[0].x: nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
    expect(messageFor(body, nest(MAX_JSON_DEPTH + 1, 1, true))).toBe(
      `a.a.a.a.a.a.a.a: nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
    expect(messageFor(body, nest(MAX_JSON_DEPTH + 1))).toBe(
      `body: nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
    expect(messageFor(body, { messages: [nest(MAX_JSON_DEPTH - 2, 1, true)] })).toBeNull();
    expect(messageFor(Type.Object({}), { q: nest(MAX_JSON_DEPTH) }, "querystring")).toBe(
      `q: nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  });
});
