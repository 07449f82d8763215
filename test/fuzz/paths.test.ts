import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { pathSegment } from "./helpers-arbitraries.js";
import { fillPath, jsonRequest, routeName, sendChecked, type FuzzRoute, type FuzzWorld } from "./helpers.js";
import { FUZZ_STORES, useFuzzWorld } from "./fuzz-setup.js";

/** A body the route would accept on a real record, so that only the path can be wrong. */
const BODIES: Record<string, unknown> = {
  PUT: { limit_usd: 1 },
  PATCH: {},
  POST: {},
};

/**
 * Whether a raw path segment could name a seeded record, or makes the URL another route's (then it
 * is not a malformed path): a single-dot segment is removed by URL normalisation, so
 * `/guardrails/./assignments/keys` is the organization-wide `/guardrails/assignments/keys`.
 */
function couldMatch(w: FuzzWorld, segment: string): boolean {
  if (/^(\.|%2e)$/i.test(segment)) return true;
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return false;
  }
  return w.knownRefs.has(decoded.toLowerCase().trim());
}

/** Random identifiers in every path parameter: 400 or 404 with the envelope, never 5xx. */
for (const { factory, runs } of FUZZ_STORES) {
  describe.skipIf(factory.skip)(`malformed path parameters (${factory.name})`, () => {
    const w = useFuzzWorld(factory);
    let paramRoutes: FuzzRoute[];
    beforeAll(() => {
      paramRoutes = w.routes.filter((r) => r.pathParams.length > 0);
    });

    it("finds every parameterised route in the OpenAPI document", () => {
      const names = new Set(paramRoutes.flatMap((r) => r.pathParams.map((p) => p.name)));
      expect([...names].sort()).toEqual(expect.arrayContaining(["hash", "id", "interval", "workspace_ref"]));
    });

    const check = async (r: FuzzRoute, param: string, segment: string) => {
      const url = fillPath(w, r, { [param]: segment });
      const res = await sendChecked(w, jsonRequest(r.method, url, BODIES[r.method] ?? {}));
      expect([400, 404], `${routeName(r)} ${param}=${segment.slice(0, 100)}`).toContain(res.statusCode);
    };

    it("random segments: 400 or 404, nothing stored", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...paramRoutes)
            .chain((r) => fc.tuple(fc.constant(r), fc.constantFrom(...r.pathParams.map((p) => p.name)))),
          pathSegment,
          async ([r, param], segment) => {
            if (couldMatch(w, segment)) return;
            await check(r, param, segment);
          },
        ),
        { numRuns: runs(250) },
      );
    });

    it("regressions: NUL, bad percent escapes and 10 KB segments on every parameter", async () => {
      for (const r of paramRoutes) {
        for (const p of r.pathParams) {
          for (const segment of [
            "%00",
            "a%00",
            "%FF",
            "%",
            "%C0%80",
            "a".repeat(10_240),
            "..",
            "a%2Fb",
            "",
          ]) {
            await check(r, p.name, segment);
          }
        }
      }
    });

    it("an unknown interval is 400 and names the parameter", async () => {
      const r = paramRoutes.find((x) => x.pathParams.some((p) => p.name === "interval"))!;
      const res = await sendChecked(w, jsonRequest(r.method, fillPath(w, r, { interval: "DAILY" }), {}));
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toMatch(/^interval: /);
    });
  });
}
