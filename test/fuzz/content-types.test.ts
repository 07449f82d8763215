import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { validFor } from "./helpers-arbitraries.js";
import { fillPath, routeName, sendChecked, type FuzzRoute } from "./helpers.js";
import { FUZZ_STORES, useFuzzWorld } from "./fuzz-setup.js";

/** A Content-Type that means UTF-8 JSON: the only kind a management operation accepts. */
const isUtf8Json = (ct: string) => {
  const [type, ...params] = ct.split(";").map((s) => s.trim().toLowerCase());
  if (type !== "application/json") return false;
  return params.every((p) => !p.startsWith("charset") || /^charset\s*=\s*"?utf-?8"?$/.test(p));
};

const contentType: fc.Arbitrary<string | null> = fc.oneof(
  fc.constantFrom<string | null>(
    null,
    "text/plain",
    "text/plain; charset=utf-8",
    "text/json",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=----fuzz",
    "application/xml",
    "application/octet-stream",
    "application/x-ndjson",
    "application/json; charset=latin1",
    "application/json; charset=iso-8859-1",
    "application/json;charset=utf-16",
    'application/json; charset="ascii"',
    "application/jsonx",
    "application/json-patch+json",
    "application/",
    "application",
    "json",
    "*/*",
    "",
    " ",
    ";",
    "application/json/x",
    "\u0001\u00ff",
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary-ascii", maxLength: 40 }),
);

/** Bodies in any media type but JSON: 415 (or 400), the envelope, nothing stored. */
for (const { factory, runs } of FUZZ_STORES) {
  describe.skipIf(factory.skip)(`content types (${factory.name})`, () => {
    const w = useFuzzWorld(factory);
    let bodyRoutes: FuzzRoute[];
    beforeAll(() => {
      bodyRoutes = w.routes.filter((r) => r.body !== null);
    });

    it("a valid body in any other media type is 415 or 400", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...bodyRoutes).chain((r) => fc.tuple(fc.constant(r), validFor(r.body!))),
          contentType.filter((ct) => ct === null || !isUtf8Json(ct)),
          async ([r, body], ct) => {
            const res = await sendChecked(w, {
              method: r.method,
              url: fillPath(w, r),
              payload: JSON.stringify(body),
              headers: ct === null ? {} : { "content-type": ct },
            });
            expect([400, 415], `${routeName(r)} ${JSON.stringify(ct)}`).toContain(res.statusCode);
          },
        ),
        { numRuns: runs(150) },
      );
    });

    it("form and multipart encodings of the right fields are 415", async () => {
      for (const r of bodyRoutes) {
        for (const [ct, payload] of [
          ["application/x-www-form-urlencoded", "name=x&slug=x&limit_usd=1&type=webhook"],
          [
            "multipart/form-data; boundary=XyZ",
            '--XyZ\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--XyZ--\r\n',
          ],
          ["text/plain", '{"name":"x","slug":"x"}'],
          ["application/json; charset=latin1", '{"name":"x","slug":"x","limit_usd":1}'],
        ] as const) {
          const res = await sendChecked(w, {
            method: r.method,
            url: fillPath(w, r),
            payload,
            headers: { "content-type": ct },
          });
          expect(res.statusCode, `${routeName(r)} ${ct}`).toBe(415);
        }
      }
    });
  });
}
