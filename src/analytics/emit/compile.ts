import type { AnalyticsDialect, BoundQuery } from "../../stores/activity-store.js";
import type { Plan } from "../plan/plan.js";
import type { CompileContext } from "./build-filters.js";
import { buildSelect } from "./build-select.js";
import { clickhouseDialect } from "./clickhouse-dialect.js";
import type { SqlDialect } from "./dialect.js";
import { duckdbDialect } from "./duckdb-dialect.js";
import { printSql } from "./print-sql.js";

export const DIALECTS: Readonly<Record<AnalyticsDialect, SqlDialect>> = {
  duckdb: duckdbDialect,
  clickhouse: clickhouseDialect,
};

/** Plan → bound SQL for one engine. */
export function compile(plan: Plan, ctx: CompileContext, dialect: AnalyticsDialect): BoundQuery {
  return printSql(buildSelect(plan, ctx), DIALECTS[dialect]);
}

export type { CompileContext };
