import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BatchPreparer } from "../../src/domain/ingest/pipeline/preparer-port.js";
import { startPreparePool } from "../../src/domain/ingest/workers/prepare-pool.js";
import { MAX_JSON_DEPTH } from "../../src/http/validation.js";
import { MAX_DEPTH } from "../../src/domain/ingest/records/nesting.js";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { activityRows, wireRecord } from "./ingest-helpers.js";

/**
 * POST /activity/generations parses its own body (on a worker thread with a pool), after the
 * edge's check for bodies nested deeper than MAX_JSON_DEPTH: the same limit applies there, to
 * every value of the body (fields ingest ignores included), as 400 naming the field, never a 5xx,
 * in JSON and NDJSON, inline and on the worker pool; nothing of the batch is stored. Before, such
 * a body was accepted (200) with the deep value silently dropped, unlike every other route.
 */
const pool = startPreparePool(1);
afterAll(() => pool.close());
const MODES: { name: string; preparer?: BatchPreparer }[] = [
  { name: "inline" },
  { name: "worker pool", preparer: pool },
];

/** `n` levels of arrays as JSON text: `[[...]]`. */
const arrays = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
/** `n` levels of objects as JSON text: `{"a":{"a":...1}}`. */
const objects = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;

/** A record's JSON text with `"x": <x>` added. */
const withX = (record: Record<string, unknown>, x: string) =>
  `${JSON.stringify(record).slice(0, -1)},"x":${x}}`;

it("ingest's limit is the edge's", () => {
  expect(MAX_DEPTH).toBe(MAX_JSON_DEPTH);
});

for (const mode of MODES) {
  describe(`ingest bodies nested deeper than ${MAX_JSON_DEPTH} levels (${mode.name})`, () => {
    let s: ListeningApp;
    beforeAll(async () => {
      s = await startListening({ ...(mode.preparer ? { preparer: mode.preparer } : {}) });
    });
    afterAll(() => s.close());

    const post = async (body: string, contentType = "application/json") => {
      const r = await fetch(`${s.baseUrl}/activity/generations`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.key}`, "content-type": contentType },
        body,
      });
      return { status: r.status, text: await r.text() };
    };
    const expectRefused = (r: { status: number; text: string }, field: string) => {
      expect(r.status, r.text.slice(0, 300)).toBe(400);
      const body = JSON.parse(r.text) as { error: { code: number; message: string } };
      expect(body.error.code).toBe(400);
      expect(body.error.message).toBe(`${field}: nested deeper than ${MAX_JSON_DEPTH} levels`);
    };
    const stored = async (...ids: string[]) =>
      (await activityRows(s, `id IN (${ids.map((id) => `'${id}'`).join(", ")})`)).length;

    it("a record one level too deep is 400 naming the field (JSON), and nothing of the batch is stored", async () => {
      const ok = wireRecord(s);
      const deep = wireRecord(s);
      // Record at level 3; x at level 4, so x holds MAX_JSON_DEPTH - 3 levels at most.
      const over = MAX_JSON_DEPTH - 3 + 1;
      for (const [x, field] of [
        [arrays(over), "generations[1].x"],
        [objects(over), "generations[1].x.a.a.a.a.a"],
      ] as const) {
        const body = `{"generations":[${JSON.stringify(ok)},${withX(deep, x)}]}`;
        expectRefused(await post(body), field);
      }
      expect(await stored(ok.id as string, deep.id as string)).toBe(0);
    });

    it("far deeper than any call stack: the same 400 (JSON and NDJSON, arrays and objects)", async () => {
      for (const [x, path] of [
        [arrays(200_000), ".x"],
        [objects(200_000), ".x.a.a.a.a.a"],
      ] as const) {
        const rec = wireRecord(s);
        expectRefused(await post(`{"generations":[${withX(rec, x)}]}`), `generations[0]${path}`);
        const second = wireRecord(s);
        const nd = `${JSON.stringify(wireRecord(s))}\n${withX(second, x)}\n`;
        expectRefused(await post(nd, "application/x-ndjson"), `generations[1]${path}`);
        expect(await stored(rec.id as string, second.id as string)).toBe(0);
      }
    });

    it("the path names the first segments of the deep value, inside classifications too", async () => {
      const rec = wireRecord(s);
      const x = `{"b":[{"c":${objects(200)}}]}`;
      expectRefused(await post(`{"generations":[${withX(rec, x)}]}`), "generations[0].x.b[0].c.a.a");
      const tagged = {
        ...wireRecord(s),
        classifications: [
          { classifier_id: "6a1f3c1e-3f4b-4a44-9a9e-0a1b2c3d4e5f", dimension_name: "topic", value: "v" },
        ],
      };
      const text = JSON.stringify({ generations: [tagged] }).replace(
        '"value":"v"',
        `"value":"v","y":${arrays(300)}`,
      );
      expectRefused(await post(text), "generations[0].classifications[0].y");
    });

    it("a field of the body beside generations is checked too", async () => {
      const rec = wireRecord(s);
      expectRefused(
        await post(`{"generations":[${JSON.stringify(rec)}],"extra":${objects(300)}}`),
        "extra.a.a.a.a.a.a",
      );
      expect(await stored(rec.id as string)).toBe(0);
    });

    it("a record exactly at the limit is accepted, in JSON and in NDJSON", async () => {
      const json = wireRecord(s);
      const r = await post(`{"generations":[${withX(json, arrays(MAX_JSON_DEPTH - 3))}]}`);
      expect(r.status, r.text.slice(0, 300)).toBe(200);
      const nd = wireRecord(s);
      const r2 = await post(`${withX(nd, objects(MAX_JSON_DEPTH - 3))}\n`, "application/x-ndjson");
      expect(r2.status, r2.text.slice(0, 300)).toBe(200);
      expect(await stored(json.id as string, nd.id as string)).toBe(2);
    });
  });
}
