import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { MAX_JSON_DEPTH } from "../../src/http/validation.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * A body nested deeper than MAX_JSON_DEPTH levels of arrays and objects is refused at the edge on
 * every route: 400 in the envelope, naming the field. Chat bodies that the chat schema accepts
 * (the deep value in a content part or a tool) were a 500 before (token counting and the upstream
 * body stringify them). A body exactly MAX_JSON_DEPTH deep is still answered.
 */

/** Levels of arrays and objects in a JSON value (the value itself is level 1 when it is one). */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== "object") return 0;
  const children = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
  return 1 + Math.max(0, ...children.map(depthOf));
}

/** A content part whose `x` makes the whole chat body `depth` levels deep. */
function contentPartBody(depth: number, stream = false): unknown {
  const body = (x: unknown) => ({
    model: "mock/echo",
    stream,
    messages: [{ role: "user", content: [{ type: "input_audio", x }] }],
  });
  const above = depthOf(body([])) - 1; // the levels above x
  let x: unknown = [];
  for (let i = 1; i < depth - above; i++) x = [x];
  const out = body(x);
  expect(depthOf(out)).toBe(depth);
  return out;
}

/** A tool whose JSON Schema (arrays of arrays) makes the whole chat body `depth` levels deep. */
function toolBody(depth: number): unknown {
  const body = (parameters: unknown) => ({
    model: "mock/echo",
    messages: [{ role: "user", content: "Hi" }],
    tools: [{ type: "function", function: { name: "f", parameters } }],
  });
  const above = depthOf(body({})) - 1; // the levels above parameters
  let schema: unknown = { type: "string" };
  for (let i = 1; i < depth - above; i++) schema = { type: "array", items: schema };
  const out = body(schema);
  expect(depthOf(out)).toBe(depth);
  return out;
}

describe(`bodies nested deeper than ${MAX_JSON_DEPTH} levels`, () => {
  let s: ListeningApp;
  let key: string;
  beforeAll(async () => {
    s = await startListening({ clock: systemClock });
    const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "depth" } });
    expect(r.statusCode).toBe(201);
    key = r.json<{ key: string }>().key;
  });
  afterAll(() => s.close());

  /** `body` as JSON text, or a value to send as JSON. */
  const post = async (path: string, body: unknown, auth: string) => {
    const r = await fetch(`${s.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: r.status, contentType: r.headers.get("content-type"), text: await r.text() };
  };

  const expectRefused = (r: Awaited<ReturnType<typeof post>>, field: string) => {
    expect(r.status, r.text.slice(0, 300)).toBe(400);
    expect(r.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(r.text)).toEqual({
      error: { code: 400, message: `${field}: nested deeper than ${MAX_JSON_DEPTH} levels`, metadata: null },
    });
  };

  it("the limit is 128 levels", () => {
    expect(MAX_JSON_DEPTH).toBe(128);
  });

  it("a chat body one level deeper is 400 naming the field, in a content part or a tool, streamed or not", async () => {
    expectRefused(
      await post("/chat/completions", contentPartBody(MAX_JSON_DEPTH + 1), key),
      "messages[0].content[0].x",
    );
    expectRefused(
      await post("/chat/completions", contentPartBody(MAX_JSON_DEPTH + 1, true), key),
      "messages[0].content[0].x",
    );
    expectRefused(
      await post("/chat/completions", toolBody(MAX_JSON_DEPTH + 1), key),
      "tools[0].function.parameters.items.items.items.items",
    );
    // Far deeper than any call stack: the same answer.
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const text = `{"model":"mock/echo","messages":[{"role":"user","content":[{"type":"input_audio","x":${deep}}]}]}`;
    expectRefused(await post("/chat/completions", text, key), "messages[0].content[0].x");
  });

  it("a chat body exactly 128 levels deep is answered by mock/echo", async () => {
    for (const body of [contentPartBody(MAX_JSON_DEPTH), toolBody(MAX_JSON_DEPTH)]) {
      const r = await post("/chat/completions", body, key);
      expect(r.status, r.text.slice(0, 300)).toBe(200);
      const json = JSON.parse(r.text) as { object: string; choices: unknown[] };
      expect(json.object).toBe("chat.completion");
      expect(json.choices).toHaveLength(1);
    }
    const streamed = await post("/chat/completions", contentPartBody(MAX_JSON_DEPTH, true), key);
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain("data: [DONE]");
  });

  it("on management routes too, whatever the field", async () => {
    let x: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) x = { a: x }; // levels 2..129 under the body's object
    expectRefused(await post("/workspaces", { name: "Deep", slug: "deep", x }, s.key), "x.a.a.a.a.a.a.a");
    let y: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH - 1; i++) y = { a: y };
    const r = await post("/workspaces", { name: "Deep", slug: "deep", x: y }, s.key);
    expect(r.status, r.text.slice(0, 300)).toBe(201);
  });
});
