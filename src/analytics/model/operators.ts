/** Filter operators of ordinary filters (docs/wire-compatibility.md "Analytics limits"). */
export type OperatorName = "eq" | "neq" | "gt" | "gte" | "lt" | "lte" | "in" | "not_in";

export interface OperatorDef {
  name: OperatorName;
  value_type: "scalar" | "array";
  /** Allowed in classifier_filters (tag values are strings: no ordering operators). */
  classifier: boolean;
}

export const OPERATORS: readonly OperatorDef[] = [
  { name: "eq", value_type: "scalar", classifier: true },
  { name: "neq", value_type: "scalar", classifier: true },
  { name: "gt", value_type: "scalar", classifier: false },
  { name: "gte", value_type: "scalar", classifier: false },
  { name: "lt", value_type: "scalar", classifier: false },
  { name: "lte", value_type: "scalar", classifier: false },
  { name: "in", value_type: "array", classifier: true },
  { name: "not_in", value_type: "array", classifier: true },
];

export const OPERATOR_BY_NAME: ReadonlyMap<string, OperatorDef> = new Map(OPERATORS.map((o) => [o.name, o]));

/** Largest array of an in / not_in filter. */
export const MAX_FILTER_VALUES = 1000;
