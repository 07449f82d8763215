import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { printSql } from "../../src/analytics/emit/print-sql.js";
import { DIALECTS, compile } from "../../src/analytics/emit/compile.js";
import { DIMENSIONS } from "../../src/analytics/model/dimensions.js";
import { buildPlan } from "../../src/analytics/plan/build-plan.js";
import { DomainError } from "../../src/domain/errors.js";

const NOW = new Date("2026-11-18T12:00:00.000Z");
const CTX = { organizationId: "00000000-0000-4000-8000-000000000001", defaultWorkspaceId: null };
const CLF = "11111111-1111-4111-8111-111111111111";
const STRING_DIMS = DIMENSIONS.filter((d) => d.value_type === "string" && d.resolve === "none").map(
  (d) => d.name,
);

/** A marker no SQL the compiler writes contains, followed by arbitrary (hostile) text. */
const hostile = fc.string({ unit: "binary", maxLength: 40 }).map((s) => `QZX${s}`);

describe("analytics SQL injection", () => {
  it("request values never reach SQL text: they are bound parameters (both dialects)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...STRING_DIMS),
        fc.constantFrom("eq", "neq", "gt", "lte", "in", "not_in"),
        hostile,
        hostile,
        (field, operator, value, tagValue) => {
          const array = operator === "in" || operator === "not_in";
          const plan = buildPlan(
            {
              metrics: ["request_count"],
              filters: [{ field, operator, value: array ? [value, "b"] : value }],
              classifier_filters: {
                classifier_id: CLF,
                filters: [{ field: "topic", operator: "eq", value: tagValue }],
              },
              classifier_dimensions: { classifier_id: CLF, dimension_names: ["topic"] },
            },
            NOW,
          );
          for (const dialect of ["duckdb", "clickhouse"] as const) {
            const q = compile(plan, CTX, dialect);
            expect(q.sql).not.toContain("QZX");
            expect(Object.values(q.params)).toContain(value);
            expect(Object.values(q.params)).toContain(tagValue);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("names that are not in the model are 400 before any SQL exists", () => {
    fc.assert(
      fc.property(
        hostile,
        fc.constantFrom("metric", "dimension", "filter", "order", "classifier"),
        (name, where) => {
          const req =
            where === "metric"
              ? { metrics: [name] }
              : where === "dimension"
                ? { metrics: ["request_count"], dimensions: [name] }
                : where === "filter"
                  ? { metrics: ["request_count"], filters: [{ field: name, operator: "eq", value: "a" }] }
                  : where === "order"
                    ? { metrics: ["request_count"], order_by: { field: name, direction: "asc" as const } }
                    : {
                        metrics: ["request_count"],
                        classifier_dimensions: { classifier_id: CLF, dimension_names: [name] },
                      };
          expect(() => buildPlan(req, NOW)).toThrow(DomainError);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the printer refuses an identifier outside [a-z_][a-z0-9_]* (a compiler bug fails loudly)", () => {
    const tree = {
      select: {
        items: [{ expr: { t: "ref" as const, alias: "x; DROP TABLE generations" }, alias: "x" }],
        from: { t: "table" as const, name: "generations" as const, alias: "g" as const },
      },
      params: {},
    };
    expect(() => printSql(tree, DIALECTS.duckdb)).toThrow(/refusing identifier/);
    expect(() => printSql(tree, DIALECTS.clickhouse)).toThrow(/refusing identifier/);
  });
});
