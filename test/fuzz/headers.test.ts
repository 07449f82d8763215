import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { badAuthorization, validFor } from "./helpers-arbitraries.js";
import {
  ANY_KEY_ROUTES,
  INFERENCE_ROUTES,
  PUBLIC_ROUTES,
  isManagementRoute,
  fillPath,
  jsonRequest,
  routeName,
  sendChecked,
  type FuzzRoute,
  type FuzzWorld,
  type SendOptions,
} from "./helpers.js";
import { FUZZ_STORES, useFuzzWorld } from "./fuzz-setup.js";

/** A request for the route, with the body (when it takes one): only the credentials can be wrong. */
const requestFor = (w: FuzzWorld, r: FuzzRoute, body: unknown, auth: string | null): SendOptions =>
  r.body === null
    ? { method: r.method, url: fillPath(w, r), auth }
    : { ...jsonRequest(r.method, fillPath(w, r), body ?? {}), auth };

const routeWithBody = (routes: FuzzRoute[]) =>
  fc
    .constantFrom(...routes)
    .chain((r) => fc.tuple(fc.constant(r), r.body ? validFor(r.body) : fc.constant(undefined)));

/** Every route that authenticates its caller. */
const authed = (w: FuzzWorld) => w.routes.filter((r) => !PUBLIC_ROUTES.has(routeName(r)));

/** Bad credentials on every route: 401 (403 for an ordinary key), the envelope, nothing stored. */
for (const { factory, runs } of FUZZ_STORES) {
  describe.skipIf(factory.skip)(`authorization (${factory.name})`, () => {
    const w = useFuzzWorld(factory);

    it("random Authorization values are 401", async () => {
      const keys = [w.t.key, w.seeds.ordinaryKey];
      await fc.assert(
        fc.asyncProperty(routeWithBody(authed(w)), badAuthorization(keys), async ([r, body], auth) => {
          const res = await sendChecked(w, requestFor(w, r, body, auth));
          expect(res.statusCode, `${routeName(r)} ${JSON.stringify(auth.slice(0, 100))}`).toBe(401);
        }),
        { numRuns: runs(200) },
      );
    });

    it("no Authorization header, and disabled, deleted or expired keys, are 401", async () => {
      const s = w.seeds;
      const auths = [null, `Bearer ${s.disabledKey}`, `Bearer ${s.deletedKey}`, `Bearer ${s.expiredKey}`];
      await fc.assert(
        fc.asyncProperty(routeWithBody(authed(w)), fc.constantFrom(...auths), async ([r, body], auth) => {
          const res = await sendChecked(w, requestFor(w, r, body, auth));
          // The data plane says a disabled key is disabled (403), as the hosted original does.
          const disabled = INFERENCE_ROUTES.has(routeName(r)) && auth === `Bearer ${s.disabledKey}`;
          expect(res.statusCode, `${routeName(r)} ${String(auth)}`).toBe(disabled ? 403 : 401);
        }),
        { numRuns: runs(60) },
      );
    });

    it("an ordinary key on a management route is 403, before the body is looked at", async () => {
      const mgmt = w.routes.filter((r) => isManagementRoute(routeName(r)));
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...mgmt),
          fc.oneof(fc.jsonValue(), fc.constant(undefined)),
          async (r, body) => {
            const res = await sendChecked(w, requestFor(w, r, body, `Bearer ${w.seeds.ordinaryKey}`));
            expect(res.statusCode, routeName(r)).toBe(403);
            expect(res.json().error.message).toBe("Only management keys can perform this operation");
          },
        ),
        { numRuns: runs(60) },
      );
    });

    it("the routes for any key answer both kinds of key", async () => {
      for (const name of ANY_KEY_ROUTES) {
        const r = w.routes.find((x) => routeName(x) === name)!;
        expect(r, name).toBeDefined();
        for (const key of [w.t.key, w.seeds.ordinaryKey]) {
          const res = await sendChecked(w, requestFor(w, r, undefined, `Bearer ${key}`));
          expect(res.statusCode, name).toBe(200);
        }
      }
    });
  });
}
