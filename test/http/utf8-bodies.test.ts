import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPreparePool } from "../../src/domain/ingest/workers/prepare-pool.js";
import { hasLoneSurrogateEscape } from "../../src/http/utf8-only.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { wireRecord } from "./ingest-helpers.js";

/**
 * Bodies are UTF-8 (RFC 8259): invalid bytes and escaped lone surrogates are 400 naming the field,
 * never replaced by U+FFFD (which merged distinct generation ids: `utf\xff1` and `utf\xfe1` became
 * one id, and a billing record was dropped as a duplicate).
 */
const pools = [
  { name: "inline", pool: () => undefined },
  { name: "worker pool", pool: () => startPreparePool(1) },
] as const;

for (const mode of pools) {
  describe(`ingest (${mode.name}): invalid UTF-8 and lone surrogates`, () => {
    let t: TestApp;
    const pool = mode.pool();
    beforeAll(async () => {
      t = await makeTestApp(pool ? { preparer: pool } : {});
    });
    afterAll(async () => {
      await t.close();
      await pool?.close();
    });

    const post = (body: Buffer, contentType: string) =>
      t.call({
        method: "POST",
        url: "/api/v1/activity/generations",
        payload: body,
        headers: { "content-type": contentType },
      });

    /** Two records whose ids differ only in one invalid byte, as raw bytes. */
    const twoIds = (format: "json" | "ndjson") => {
      const [a, b] = [wireRecord(t, { id: "utfXX1" }), wireRecord(t, { id: "utfYY1" })];
      const text =
        format === "json"
          ? JSON.stringify({ generations: [a, b] })
          : `${JSON.stringify(a)}\n${JSON.stringify(b)}\n`;
      const buf = Buffer.from(text, "utf8");
      buf.set([0xff], buf.indexOf("XX"));
      buf.set([0xfe], buf.indexOf("YY"));
      // Drop the second placeholder byte of each: `utf\xff1`, `utf\xfe1`.
      return Buffer.concat([
        buf.subarray(0, buf.indexOf("X")),
        buf.subarray(buf.indexOf("X") + 1, buf.indexOf("Y")),
        buf.subarray(buf.indexOf("Y") + 1),
      ]);
    };

    it("NDJSON ids utf\\xff1 and utf\\xfe1: 400 naming the first record's id, nothing accepted", async () => {
      const res = await post(twoIds("ndjson"), "application/x-ndjson");
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toBe("generations[0].id: is not valid UTF-8");
    });

    it("JSON body with invalid bytes: 400 naming the field", async () => {
      const res = await post(twoIds("json"), "application/json");
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toBe("generations[0].id: is not valid UTF-8");
    });

    it("a lone surrogate escape (\\ud800) in a record is 400 naming the field; a valid pair is accepted", async () => {
      const bad = JSON.stringify({ generations: [wireRecord(t), wireRecord(t, { model: "MODEL" })] }).replace(
        "MODEL",
        "m\\ud800x",
      );
      const res = await post(Buffer.from(bad), "application/json");
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toBe(
        "generations[1].model: holds a lone surrogate (not valid Unicode text)",
      );
      const nd = `${JSON.stringify(wireRecord(t, { model: "MODEL" })).replace("MODEL", "m\\udc00")}\n`;
      const r2 = await post(Buffer.from(nd), "application/x-ndjson");
      expect(r2.statusCode).toBe(400);
      expect(r2.json().error.message).toMatch(/^generations\[0\]\.model: holds a lone surrogate/);

      const pair = JSON.stringify({ generations: [wireRecord(t, { id: "PAIR" })] }).replace(
        "PAIR",
        `pair-${Date.now()}-\\ud83d\\ude00`,
      );
      const ok = await post(Buffer.from(pair), "application/json");
      expect(ok.statusCode).toBe(200);
      expect(ok.json().data).toMatchObject({ accepted: 1 });
    });
  });
}

describe("management routes: invalid UTF-8 and lone surrogates", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(async () => t.close());

  it("POST /workspaces with an invalid byte in the name: 400 naming name; with \\udfff: 400 naming name", async () => {
    const raw = Buffer.from(JSON.stringify({ name: "caf#", slug: "cafe" }));
    raw.set([0xe9], raw.indexOf("#"));
    const res = await t.call({
      method: "POST",
      url: "/api/v1/workspaces",
      payload: raw,
      headers: { "content-type": "application/json" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe("name: is not valid UTF-8");

    const lone = await t.call({
      method: "POST",
      url: "/api/v1/workspaces",
      payload: '{"name":"a\\udfffb","slug":"lone"}',
      headers: { "content-type": "application/json" },
    });
    expect(lone.statusCode).toBe(400);
    expect(lone.json().error.message).toBe("name: holds a lone surrogate (not valid Unicode text)");
  });

  it("the lexical check tells escapes from escaped backslashes and pairs from halves", () => {
    expect(hasLoneSurrogateEscape(Buffer.from('"\\ud800"'))).toBe(true);
    expect(hasLoneSurrogateEscape(Buffer.from('"\\\\ud800"'))).toBe(false);
    expect(hasLoneSurrogateEscape(Buffer.from('"\\\\\\ud800"'))).toBe(true);
    expect(hasLoneSurrogateEscape(Buffer.from('"\\ud83d\\ude00"'))).toBe(false);
    expect(hasLoneSurrogateEscape(Buffer.from('"\\ude00\\ud83d"'))).toBe(true);
    expect(hasLoneSurrogateEscape(Buffer.from('"\\ud83d\\u0041"'))).toBe(true);
  });
});
