import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { accepts, partlyWrongBody, validFor } from "./helpers-arbitraries.js";
import { MAX_RECORDS } from "../../src/domain/ingest/records/validate-generations.js";
import { fillPath, jsonRequest, routeName, sendChecked, type FuzzRoute } from "./helpers.js";
import { FUZZ_STORES, useFuzzWorld } from "./fuzz-setup.js";

/** Every string in a JSON value, with its field name and a copy of the value where it ends in NUL. */
interface Leaf {
  /** `filters[0].value`, as error messages name fields. */
  field: string;
  /** False when a key (empty, or with dots or brackets) makes the name ambiguous. */
  plain: boolean;
  poison: () => unknown;
}

function stringLeaves(root: unknown): Leaf[] {
  const out: Leaf[] = [];
  const walk = (v: unknown, path: (string | number)[]) => {
    if (typeof v === "string") {
      out.push({
        field: path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join(""),
        // A key of digits is named like an array index (`config[0]`): JSON pointers do not tell them apart.
        plain: path.every((p) => typeof p === "number" || (/^[\w-]+$/.test(p) && !/^\d+$/.test(p))),
        poison: () => {
          const copy: unknown = structuredClone(root);
          if (path.length === 0) return `${v}\u0000`;
          let at: any = copy;
          for (const p of path.slice(0, -1)) at = at[p];
          at[path[path.length - 1]!] = `${v}\u0000`;
          return copy;
        },
      });
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (v !== null && typeof v === "object")
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(root, []);
  return out.filter((l) => l.field !== "");
}

/** Bad bodies on every operation that takes one: 4xx with the envelope, never 5xx, nothing stored. */
for (const { factory, runs } of FUZZ_STORES) {
  describe.skipIf(factory.skip)(`malformed bodies (${factory.name})`, () => {
    const w = useFuzzWorld(factory);
    let bodyRoutes: FuzzRoute[];
    beforeAll(() => {
      bodyRoutes = w.routes.filter((r) => r.body !== null);
    });

    const route = () => fc.constantFrom(...bodyRoutes);

    it("finds the operations that take a body in the OpenAPI document", () => {
      expect(bodyRoutes.map(routeName)).toEqual(
        expect.arrayContaining([
          "POST /api/v1/keys",
          "PATCH /api/v1/keys/{hash}",
          "POST /api/v1/workspaces",
          "PATCH /api/v1/workspaces/{id}",
          "PUT /api/v1/workspaces/{workspace_ref}/budgets/{interval}",
          "POST /api/v1/observability/destinations",
          "PATCH /api/v1/observability/destinations/{id}",
        ]),
      );
    });

    it("random JSON values: never 5xx; a 4xx changes nothing", async () => {
      const value = fc.oneof(
        fc.jsonValue(),
        fc.anything().map((v) => {
          try {
            return JSON.parse(JSON.stringify(v) ?? "null") as unknown;
          } catch {
            return null; // BigInt and cycles have no JSON form.
          }
        }),
      );
      await fc.assert(
        fc.asyncProperty(route(), value, async (r, v) => {
          const res = await sendChecked(w, jsonRequest(r.method, fillPath(w, r), v));
          if (!accepts(r.body!, v)) expect(res.statusCode).toBe(400);
        }),
        { numRuns: runs(200) },
      );
    });

    it("right field names, wrong types (partly valid bodies too): 400 and nothing applied", async () => {
      await fc.assert(
        fc.asyncProperty(
          // Routes whose schema names fields; the API surfaces' bodies (Responses, Messages,
          // embeddings) are any object at the edge, checked field by field by their translations
          // (test/unit/surfaces/).
          fc
            .constantFrom(...bodyRoutes.filter((r) => Object.keys(r.body!.properties ?? {}).length > 0))
            .chain((r) => fc.tuple(fc.constant(r), partlyWrongBody(r.body!))),
          async ([r, { body, wrong }]) => {
            const res = await sendChecked(w, jsonRequest(r.method, fillPath(w, r), body));
            // Ingest answers more than MAX_RECORDS records with 413 (docs/api-notes.md "Activity ingest"), whatever they hold.
            const records = (body as { generations?: unknown } | null)?.generations;
            const tooMany = Array.isArray(records) && records.length > MAX_RECORDS;
            expect(res.statusCode, `${routeName(r)} wrong: ${wrong.join(", ")}`).toBe(tooMany ? 413 : 400);
          },
        ),
        { numRuns: runs(250) },
      );
    });

    it("valid-shaped bodies with a NUL character in any string: 400 naming the field, never a store error", async () => {
      await fc.assert(
        fc.asyncProperty(
          route().chain((r) => fc.tuple(fc.constant(r), validFor(r.body!))),
          fc.nat(),
          async ([r, body], pick) => {
            const leaves = stringLeaves(body);
            if (leaves.length === 0) return;
            // A prototype key is refused before any field is read (raw-bodies.test.ts tests that).
            if (/"__proto__"|"constructor"/.test(JSON.stringify(body))) return;
            const leaf = leaves[pick % leaves.length]!;
            const res = await sendChecked(w, jsonRequest(r.method, fillPath(w, r), leaf.poison()));
            expect(res.statusCode, `${routeName(r)} ${leaf.field}`).toBe(400);
            // The message names the field (or, when a route lists every problem, the metadata does).
            if (leaf.plain) expect(JSON.stringify(res.json().error)).toContain(leaf.field);
          },
        ),
        { numRuns: runs(150) },
      );
    });

    it("no body at all (no Content-Type either): 400 naming the body, on every operation that takes one", async () => {
      // Found by the query-string fuzzer: ingest, which parses its own body, answered 500.
      for (const r of bodyRoutes) {
        const res = await sendChecked(w, { method: r.method, url: fillPath(w, r) });
        if (r.method === "PATCH" && res.statusCode === 200) continue; // an empty PATCH changes nothing
        expect(res.statusCode, routeName(r)).toBe(400);
        expect(res.json().error.message, routeName(r)).toMatch(/^body/);
      }
    });

    it("regressions", async () => {
      const ws = w.routes.find((r) => routeName(r) === "POST /api/v1/workspaces")!;
      for (const body of [
        { name: "a\u0000b", slug: "nul-name" },
        { name: "n", slug: "s", description: "\u0000" },
        { name: "n", slug: "s", io_logging_sampling_rate: -0 },
        { name: "n", slug: "s", io_logging_sampling_rate: 1e308 },
      ]) {
        const res = await sendChecked(w, jsonRequest("POST", fillPath(w, ws), body));
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
      }
    });
  });
}
