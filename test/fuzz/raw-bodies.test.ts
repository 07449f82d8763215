import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { BODY_LIMIT } from "../../src/http/app.js";
import { MODEL_BODY_LIMIT as CHAT_BODY_LIMIT } from "../../src/http/routes/model-requests.js";
import { INGEST_BODY_LIMIT } from "../../src/http/routes/ingest.js";
import { validFor } from "./helpers-arbitraries.js";
import { ANY_KEY_RECORD_ROUTES, fillPath, routeName, sendChecked, type FuzzRoute } from "./helpers.js";
import { FUZZ_STORES, useFuzzWorld } from "./fuzz-setup.js";

/** Operations allowed more than the 1 MiB of management requests (docs/wire-compatibility.md "Validation rules"). */
const LARGER_BODY_LIMITS: Record<string, number> = {
  "POST /api/v1/activity/generations": INGEST_BODY_LIMIT,
  "POST /api/v1/chat/completions": CHAT_BODY_LIMIT,
  "POST /api/v1/responses": CHAT_BODY_LIMIT,
  "POST /api/v1/messages": CHAT_BODY_LIMIT,
  "POST /api/v1/messages/count_tokens": CHAT_BODY_LIMIT,
  "POST /api/v1/embeddings": CHAT_BODY_LIMIT,
};

/** Bodies that are not JSON text at all, or JSON text that parsers treat specially. */
for (const { factory, runs } of FUZZ_STORES) {
  describe.skipIf(factory.skip)(`raw bodies (${factory.name})`, () => {
    const w = useFuzzWorld(factory);
    let bodyRoutes: FuzzRoute[];
    beforeAll(() => {
      bodyRoutes = w.routes.filter((r) => r.body !== null);
    });

    const route = () => fc.constantFrom(...bodyRoutes);

    it("truncated JSON is 400", async () => {
      await fc.assert(
        fc.asyncProperty(
          route().chain((r) => fc.tuple(fc.constant(r), validFor(r.body!))),
          fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
          async ([r, body], cut) => {
            const text = JSON.stringify(body);
            const truncated = text.slice(0, Math.floor(text.length * cut));
            const res = await sendChecked(w, {
              method: r.method,
              url: fillPath(w, r),
              payload: truncated,
              headers: { "content-type": "application/json" },
            });
            expect(res.statusCode).toBe(400);
          },
        ),
        { numRuns: runs(100) },
      );
    });

    it("arbitrary bytes, including invalid UTF-8: never 5xx; a 4xx changes nothing", async () => {
      const bytes = fc.oneof(
        fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        fc.constantFrom(
          Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), // {"\xff\xfe":1}
          Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc0, 0x80, 0x22, 0x7d]), // overlong NUL
          Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), // BOM + {}
          Buffer.from([0xfe, 0xff, 0x00, 0x7b, 0x00, 0x7d]), // UTF-16
          Buffer.from('{"name":"\\ud800","slug":"x"}'),
        ),
      );
      await fc.assert(
        fc.asyncProperty(route(), bytes, async (r, payload) => {
          await sendChecked(w, {
            method: r.method,
            url: fillPath(w, r),
            payload,
            headers: { "content-type": "application/json" },
          });
        }),
        { numRuns: runs(150) },
      );
    });

    it("an empty body with content-type JSON is 400", async () => {
      for (const r of bodyRoutes) {
        const res = await sendChecked(w, {
          method: r.method,
          url: fillPath(w, r),
          payload: "",
          headers: { "content-type": "application/json" },
        });
        expect(res.statusCode, routeName(r)).toBe(400);
      }
    });

    it("a body over the route's limit (1 MiB for management operations) is 413", async () => {
      for (const r of bodyRoutes) {
        const limit = LARGER_BODY_LIMITS[routeName(r)] ?? BODY_LIMIT;
        const huge = JSON.stringify({ name: "x".repeat(limit), slug: "x" });
        const res = await sendChecked(w, {
          method: r.method,
          url: fillPath(w, r),
          payload: huge,
          headers: { "content-type": "application/json" },
        });
        expect(res.statusCode, routeName(r)).toBe(413);
      }
    });

    it("duplicate keys: never 5xx; a 4xx changes nothing", async () => {
      await fc.assert(
        fc.asyncProperty(
          route().chain((r) => fc.tuple(fc.constant(r), validFor(r.body!))),
          fc.jsonValue({ maxDepth: 1 }),
          async ([r, body], other) => {
            const entries = Object.entries(body as Record<string, unknown>);
            if (entries.length === 0) return;
            const [k, v] = entries[0]!;
            const text = `{${[...entries, [k, other], [k, v]]
              .map(([a, b]) => `${JSON.stringify(a)}:${JSON.stringify(b)}`)
              .join(",")}}`;
            await sendChecked(w, {
              method: r.method,
              url: fillPath(w, r),
              payload: text,
              headers: { "content-type": "application/json" },
            });
          },
        ),
        { numRuns: runs(100) },
      );
    });

    it("__proto__ and constructor keys are refused and pollute nothing", async () => {
      const poison = fc.constantFrom(
        '"__proto__":{"polluted":1}',
        '"constructor":{"prototype":{"polluted":1}}',
        '"__proto__":{"toString":"x","polluted":1}',
      );
      await fc.assert(
        fc.asyncProperty(
          route().chain((r) => fc.tuple(fc.constant(r), validFor(r.body!))),
          poison,
          fc.boolean(),
          async ([r, body], p, nested) => {
            const inner = JSON.stringify(body).slice(1, -1);
            const fields = [p, inner].filter(Boolean).join(",");
            const text = nested ? `{${inner ? `${inner},` : ""}"config":{${p}}}` : `{${fields}}`;
            const res = await sendChecked(w, {
              method: r.method,
              url: fillPath(w, r),
              payload: text,
              headers: { "content-type": "application/json" },
            });
            expect(res.statusCode, `${text.slice(0, 200)} ${res.body.slice(0, 200)}`).toBe(400);
            expect(({} as Record<string, unknown>).polluted).toBeUndefined();
          },
        ),
        { numRuns: runs(60) },
      );
    });

    it("nesting deeper than any call stack: never 5xx, nothing stored", async () => {
      // Deeper than any call stack: a recursive walk anywhere would throw RangeError (a 500).
      const depth = 20_000;
      const arrays = `${"[".repeat(depth)}${"]".repeat(depth)}`;
      const objects = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
      for (const r of bodyRoutes) {
        for (const nested of [arrays, objects]) {
          for (const text of [
            nested,
            `{"name":${nested}}`,
            `{"name":"x","slug":"x","type":"webhook","limit_usd":1,"config":{"url":"https://a.example.com","x":${nested}}}`,
          ]) {
            await sendChecked(w, {
              method: r.method,
              url: fillPath(w, r),
              payload: text,
              headers: { "content-type": "application/json" },
            });
          }
        }
      }
      // Chat bodies the chat schema accepts, with the deep value where the schema lets any JSON
      // through (a content part, a tool): they reach no handler (token counting and the upstream
      // body stringify them), the edge refuses them.
      const chat = bodyRoutes.find((r) => routeName(r) === "POST /api/v1/chat/completions");
      expect(chat).toBeDefined();
      for (const nested of [arrays, objects]) {
        for (const text of [
          `{"model":"mock/echo","messages":[{"role":"user","content":[{"type":"input_audio","x":${nested}}]}]}`,
          `{"model":"mock/echo","messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${nested}}}]}`,
          `{"model":"mock/echo","stream":true,"messages":[{"role":"user","content":"Hi"}],"tools":[${nested}]}`,
        ]) {
          const res = await sendChecked(w, {
            method: "POST",
            url: fillPath(w, chat!),
            payload: text,
            headers: { "content-type": "application/json" },
          });
          expect(res.statusCode, `${text.slice(0, 120)} → ${res.body.slice(0, 200)}`).toBe(400);
        }
      }
      // Whatever was stored must still read back.
      // (GET /generation names one record by a required id: nothing to list.)
      for (const r of w.routes.filter(
        (x) => x.method === "GET" && x.query.length > 0 && !ANY_KEY_RECORD_ROUTES.has(routeName(x)),
      )) {
        const res = await sendChecked(w, { method: "GET", url: fillPath(w, r) });
        expect(res.statusCode, routeName(r)).toBe(200);
      }
    });
  });
}
