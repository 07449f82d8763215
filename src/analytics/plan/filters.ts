import { invalid } from "../../domain/errors.js";
import { HASH_RE, UUID_RE } from "../../lib/ids.js";
import { DIMENSION_BY_NAME, type DimensionDef } from "../model/dimensions.js";
import { MAX_FILTER_VALUES, OPERATOR_BY_NAME, OPERATORS, type OperatorDef } from "../model/operators.js";
import type { FilterValue, QueryRequest } from "./query-request.js";
import type { PlanFilter } from "./plan.js";
import { shown } from "./shown.js";

const OPERATOR_LIST = OPERATORS.map((o) => o.name).join(", ");

/** Checks the value count for the operator: a scalar, or an array of 1..MAX_FILTER_VALUES. */
export function valuesFor(path: string, op: OperatorDef, value: FilterValue): readonly (string | number)[] {
  if (op.value_type === "scalar") {
    if (Array.isArray(value)) throw invalid(`${path}: must be a string or number for operator ${op.name}`);
    return [value as string | number];
  }
  if (!Array.isArray(value)) throw invalid(`${path}: must be an array for operator ${op.name}`);
  if (value.length === 0) throw invalid(`${path}: at least 1 item for operator ${op.name}`);
  if (value.length > MAX_FILTER_VALUES) throw invalid(`${path}: at most ${MAX_FILTER_VALUES} items`);
  return value as readonly (string | number)[];
}

/** A filter value of the dimension's type (no coercion: "12" is not an app id, 12 is not a model). */
function checkValue(path: string, dim: DimensionDef, v: string | number): string | number {
  switch (dim.resolve) {
    case "api_key":
      if (typeof v === "number" && Number.isSafeInteger(v)) return v;
      // A hash in capitals names the same key (as in a /keys/{hash} path): stored hashes are lowercase.
      if (typeof v === "string" && HASH_RE.test(v.toLowerCase())) return v.toLowerCase();
      throw invalid(`${path}: must be a numeric key id or a 64-character hex key hash`);
    case "workspace":
      if (typeof v === "string" && UUID_RE.test(v)) return v.toLowerCase();
      throw invalid(`${path}: must be a workspace UUID`);
    case "none":
      if (dim.value_type === "integer") {
        if (typeof v === "number" && Number.isSafeInteger(v)) return v;
        throw invalid(`${path}: must be an integer ${dim.name} id`);
      }
      if (typeof v === "string") return v;
      throw invalid(`${path}: must be a string`);
  }
}

export function planFilters(filters: QueryRequest["filters"]): PlanFilter[] {
  return (filters ?? []).map((f, i) => {
    const at = `filters[${i}]`;
    const dimension = DIMENSION_BY_NAME.get(f.field);
    if (!dimension)
      throw invalid(`${at}.field: unknown dimension ${shown(f.field)} (see GET /analytics/meta)`);
    const op = OPERATOR_BY_NAME.get(f.operator);
    if (!op) throw invalid(`${at}.operator: must be one of ${OPERATOR_LIST}`);
    const raw = valuesFor(`${at}.value`, op, f.value);
    const values = raw.map((v, j) =>
      checkValue(op.value_type === "array" ? `${at}.value[${j}]` : `${at}.value`, dimension, v),
    );
    const includeUnset = f.include_unset === true;
    if (includeUnset && op.value_type !== "array") {
      throw invalid(`${at}.include_unset: applies only to operators in and not_in`);
    }
    if (includeUnset && !dimension.has_unset) {
      throw invalid(`${at}.include_unset: dimension ${dimension.name} has no unset bucket`);
    }
    return { dimension, operator: op.name, values, includeUnset };
  });
}
