import type { SqlDialect } from "./dialect.js";

const START_OF = {
  minute: "toStartOfMinute",
  hour: "toStartOfHour",
  day: "toStartOfDay",
  week: "toMonday",
  month: "toStartOfMonth",
} as const;

export const clickhouseDialect: SqlDialect = {
  name: "clickhouse",
  param: (name, type) => `{${name}:${type}}`,
  timeParam: (name) => `fromUnixTimestamp64Milli({${name}:Int64}, 'UTC')`,
  bucket: (unit, arg) => `toUnixTimestamp(${START_OF[unit]}(${arg}), 'UTC') * 1000`,
  count: (where) => (where === null ? "count()" : `countIf(${where})`),
  // sum(Int64) is Int64 and wraps silently past 2^63; an organization's money or token total can
  // go past it (DuckDB widens to HUGEINT on its own).
  sum: (arg, where) => (where === null ? `sum(toInt128(${arg}))` : `sumIf(toInt128(${arg}), ${where})`),
  avg: (arg) => `avgOrNull(${arg})`,
  quantile: (q, arg) => `quantileExactInclusiveOrNull(${q})(${arg})`,
  toDouble: (arg) => `toFloat64(${arg})`,
  nullable: (arg) => `toNullable(${arg})`,
};
