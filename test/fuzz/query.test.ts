import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { encodeSegment } from "./helpers-arbitraries.js";
import { ANY_KEY_RECORD_ROUTES, fillPath, routeName, sendChecked, type FuzzRoute } from "./helpers.js";
import { FUZZ_STORES, useFuzzWorld } from "./fuzz-setup.js";

/** Text for a query value: numbers out of range or in odd notations, booleans in other spellings. */
const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "0",
    "-0",
    "-1",
    "1",
    "1.5",
    "1e3",
    "1e308",
    "-1e308",
    "1e400",
    "NaN",
    "Infinity",
    "0x10",
    "0b1",
    "010",
    " 1",
    "1 ",
    "+1",
    "2147483647",
    "2147483648",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999999",
    "true",
    "false",
    "TRUE",
    "yes",
    "on",
    "null",
    "undefined",
    "[]",
    "{}",
    "%00",
    "1%00",
    "%FF",
    "%",
    "00000000-0000-0000-0000-000000000000",
    "00000000-0000-4000-8000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "x".repeat(10_000),
  ),
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.double().map(String),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.string({ maxLength: 20 }).map(encodeSegment),
  fc.string({ unit: "grapheme", maxLength: 20 }).map(encodeSegment),
);

/** One `name=value` pair; the value is already URL-encoded (or deliberately broken). */
const pair = (names: string[]) =>
  fc.tuple(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 10 }).map(encodeSegment)), queryValue);

/** Random values for every query parameter: 200 or 400 with the envelope, never 5xx, nothing stored. */
for (const { factory, runs } of FUZZ_STORES) {
  describe.skipIf(factory.skip)(`query strings (${factory.name})`, () => {
    const w = useFuzzWorld(factory);
    let queryRoutes: FuzzRoute[];
    beforeAll(() => {
      queryRoutes = w.routes.filter((r) => r.query.length > 0);
    });

    it("finds the query parameters in the OpenAPI document", () => {
      const names = new Set(queryRoutes.flatMap((r) => r.query.map((q) => q.name)));
      expect([...names]).toEqual(
        expect.arrayContaining([
          "offset",
          "limit",
          "include_disabled",
          "workspace_id",
          "confirm_default_workspace_deletion",
        ]),
      );
    });

    it("random values, repeated and unknown parameters: 200 or 400", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...queryRoutes)
            .chain((r) =>
              fc.tuple(
                fc.constant(r),
                fc.array(pair(r.query.map((q) => q.name)), { minLength: 1, maxLength: 4 }),
              ),
            ),
          async ([r, pairs]) => {
            const qs = pairs.map(([k, v]) => `${k}=${v}`).join("&");
            const res = await sendChecked(w, { method: r.method, url: `${fillPath(w, r)}?${qs}` });
            // DELETE of the seeded workspace always fails: it holds an active key.
            // GET /generation names a record: an id that names none is 404.
            const allowed =
              r.method === "DELETE"
                ? [400]
                : ANY_KEY_RECORD_ROUTES.has(routeName(r))
                  ? [400, 404]
                  : [200, 400];
            expect(allowed, `${routeName(r)}?${qs.slice(0, 200)}`).toContain(res.statusCode);
            if (res.statusCode === 400 && r.method === "GET") {
              // A list refuses only its parameters, and the message names the one at fault.
              expect(res.json().error.message).toMatch(/^.+: /s);
            }
          },
        ),
        { numRuns: runs(200) },
      );
    });

    it("regressions: offsets beyond 64 bits and NUL in a value are 400 on every list", async () => {
      const lists = queryRoutes.filter((r) => r.query.some((q) => q.name === "offset"));
      expect(lists.length).toBeGreaterThan(0);
      for (const r of lists) {
        for (const qs of [
          "offset=100000000000000000000",
          "offset=9223372036854775807",
          "offset=1e300",
          "offset=2147483648",
          "workspace_id=%00",
        ]) {
          const res = await sendChecked(w, { method: r.method, url: `${fillPath(w, r)}?${qs}` });
          expect(res.statusCode, `${routeName(r)}?${qs}`).toBe(400);
        }
      }
    });

    it("the default workspace is never deleted without confirmation, whatever the value", async () => {
      const del = w.routes.find((r) => r.method === "DELETE" && r.template === "/api/v1/workspaces/{id}")!;
      await fc.assert(
        fc.asyncProperty(queryValue, async (v) => {
          const url = `${del.template.replace("{id}", w.t.workspaceId)}?confirm_default_workspace_deletion=${v}`;
          const res = await sendChecked(w, { method: "DELETE", url });
          expect(res.statusCode, url.slice(0, 200)).toBe(400);
        }),
        { numRuns: runs(60) },
      );
    });
  });
}
