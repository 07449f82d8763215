import { describe, expect, it } from "vitest";
import { compile } from "../../src/analytics/emit/compile.js";
import { buildPlan } from "../../src/analytics/plan/build-plan.js";
import type { AnalyticsDialect } from "../../src/stores/activity-store.js";
import { CTX, GOLDEN_QUERIES, NOW } from "./analytics-queries.js";

const DIALECTS: AnalyticsDialect[] = ["duckdb", "clickhouse"];

/**
 * Golden SQL: the compiler's output per dialect for representative queries, reviewed as files
 * (test/golden/<dialect>/<query>.sql). A change to generated SQL shows up as a diff here; update
 * with `npx vitest run test/golden -u` after checking it. No engine is needed.
 */
describe.each(DIALECTS)("golden analytics SQL (%s)", (dialect) => {
  for (const [name, req] of Object.entries(GOLDEN_QUERIES)) {
    it(name, async () => {
      const q = compile(buildPlan(req, NOW), CTX, dialect);
      const text = `-- ${name}\n${q.sql};\n-- params: ${JSON.stringify(q.params)}\n`;
      await expect(text).toMatchFileSnapshot(`./${dialect}/${name}.sql`);
    });
  }
});
