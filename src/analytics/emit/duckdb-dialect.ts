import type { SqlDialect } from "./dialect.js";

export const duckdbDialect: SqlDialect = {
  name: "duckdb",
  param: (name, type) => (type === "Int64" ? `CAST($${name} AS BIGINT)` : `$${name}`),
  timeParam: (name) => `epoch_ms(CAST($${name} AS BIGINT))`,
  // date_trunc('week', ...) is ISO: Monday.
  bucket: (unit, arg) => `epoch_ms(date_trunc('${unit}', ${arg}))`,
  count: (where) => (where === null ? "count(*)" : `count(*) FILTER (WHERE ${where})`),
  sum: (arg, where) => `coalesce(sum(${arg})${where === null ? "" : ` FILTER (WHERE ${where})`}, 0)`,
  avg: (arg) => `avg(${arg})`,
  quantile: (q, arg) => `quantile_cont(${arg}, ${q})`,
  toDouble: (arg) => `CAST(${arg} AS DOUBLE)`,
  nullable: (arg) => arg,
};
