import { invalid } from "../../domain/errors.js";
import { LIMITS, SNAKE_CASE_RE } from "../model/limits.js";
import { OPERATOR_BY_NAME } from "../model/operators.js";
import { valuesFor } from "./filters.js";
import type { ClassifierFilterSet, ClassifierGrouping, ClassifierOperator } from "./plan.js";
import type { QueryRequest } from "./query-request.js";
import { shown } from "./shown.js";

const SNAKE = "must be a snake_case name (a-z, 0-9 and _, starting with a letter, at most 64 characters)";

export function planClassifierGrouping(
  c: QueryRequest["classifier_dimensions"],
  takenKeys: ReadonlySet<string>,
): ClassifierGrouping | null {
  if (!c) return null;
  const names = c.dimension_names ?? [];
  if (names.length > LIMITS.maxClassifierDimensionNames) {
    throw invalid(
      `classifier_dimensions.dimension_names: at most ${LIMITS.maxClassifierDimensionNames} items`,
    );
  }
  names.forEach((n, i) => {
    const at = `classifier_dimensions.dimension_names[${i}]`;
    if (!SNAKE_CASE_RE.test(n)) throw invalid(`${at}: ${SNAKE}`);
    if (names.indexOf(n) !== i) throw invalid(`${at}: duplicate name ${shown(n)}`);
    if (takenKeys.has(n)) throw invalid(`${at}: ${shown(n)} is already a column of this query`);
  });
  return {
    classifierId: c.classifier_id.toLowerCase(),
    names: names.length > 0 ? [...names] : null,
    includeNulls: c.include_nulls === true,
  };
}

export function planClassifierFilters(c: QueryRequest["classifier_filters"]): ClassifierFilterSet | null {
  if (!c) return null;
  if (c.filters.length < 1 || c.filters.length > LIMITS.maxClassifierFilters) {
    throw invalid(`classifier_filters.filters: 1 to ${LIMITS.maxClassifierFilters} items`);
  }
  const filters = c.filters.map((f, i) => {
    const at = `classifier_filters.filters[${i}]`;
    if (!SNAKE_CASE_RE.test(f.field)) throw invalid(`${at}.field: ${SNAKE}`);
    const op = OPERATOR_BY_NAME.get(f.operator);
    if (!op?.classifier) throw invalid(`${at}.operator: must be one of eq, neq, in, not_in`);
    // Tag values are strings: a number matches the tag whose text is its decimal form.
    const values = valuesFor(`${at}.value`, op, f.value).map(String);
    return { name: f.field, operator: op.name as ClassifierOperator, values };
  });
  return { classifierId: c.classifier_id.toLowerCase(), filters };
}
