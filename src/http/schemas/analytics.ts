import { Type } from "typebox";
import { LIMITS } from "../../analytics/model/limits.js";
import { MAX_FILTER_VALUES } from "../../analytics/model/operators.js";
import { Uuid } from "./common.js";

/**
 * Wire shapes of the analytics operations. Shapes and sizes only: names of metrics and dimensions,
 * value types per operator and dimension, time rules and range caps are checked by the plan
 * (src/analytics/plan), whose messages name the field.
 */
const Scalar = Type.Union([Type.String(), Type.Number()]);
const FilterValue = Type.Union([
  Type.String(),
  Type.Number(),
  Type.Array(Scalar, { maxItems: MAX_FILTER_VALUES }),
]);
const Operator = Type.Union(
  ["eq", "neq", "gt", "gte", "lt", "lte", "in", "not_in"].map((o) => Type.Literal(o)),
);
const ClassifierOperator = Type.Union(["eq", "neq", "in", "not_in"].map((o) => Type.Literal(o)));
const Granularity = Type.Union(["minute", "hour", "day", "week", "month"].map((g) => Type.Literal(g)));

export const QueryBody = Type.Object({
  metrics: Type.Array(Type.String(), { minItems: 1, description: "Metric names (GET /analytics/meta)" }),
  dimensions: Type.Optional(Type.Array(Type.String(), { maxItems: LIMITS.maxDimensions })),
  filters: Type.Optional(
    Type.Array(
      Type.Object({
        field: Type.String(),
        operator: Operator,
        value: FilterValue,
        include_unset: Type.Optional(Type.Boolean()),
      }),
      { maxItems: LIMITS.maxFilters },
    ),
  ),
  time_range: Type.Optional(
    Type.Object({
      start: Type.String({ description: "UTC with seconds, YYYY-MM-DDTHH:MM:SSZ; inclusive" }),
      end: Type.String({ description: "UTC with seconds; exclusive" }),
    }),
  ),
  granularity: Type.Optional(Granularity),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.maxLimit })),
  group_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.maxGroupLimit })),
  order_by: Type.Optional(
    Type.Object({ field: Type.String(), direction: Type.Union([Type.Literal("asc"), Type.Literal("desc")]) }),
  ),
  classifier_dimensions: Type.Optional(
    Type.Object({
      classifier_id: Uuid,
      dimension_names: Type.Optional(
        Type.Array(Type.String(), { maxItems: LIMITS.maxClassifierDimensionNames }),
      ),
      include_nulls: Type.Optional(Type.Boolean()),
    }),
  ),
  classifier_filters: Type.Optional(
    Type.Object({
      classifier_id: Uuid,
      filters: Type.Array(
        Type.Object({ field: Type.String(), operator: ClassifierOperator, value: FilterValue }),
        { minItems: 1, maxItems: LIMITS.maxClassifierFilters },
      ),
    }),
  ),
});

const RowValue = Type.Union([Type.String(), Type.Number(), Type.Null()]);

export const QueryResponse = Type.Object({
  data: Type.Object({
    data: Type.Array(Type.Record(Type.String(), RowValue)),
    metadata: Type.Object({
      query_time_ms: Type.Number(),
      row_count: Type.Integer(),
      truncated: Type.Boolean(),
    }),
    cachedAt: Type.Optional(Type.Number({ description: "Unix ms when the cached result was computed" })),
    warnings: Type.Optional(Type.Array(Type.String())),
  }),
});

export const MetaResponse = Type.Object({
  data: Type.Object({
    metrics: Type.Array(
      Type.Object({
        name: Type.String(),
        display_label: Type.String(),
        is_rate: Type.Boolean(),
        display_format: Type.String(),
      }),
    ),
    dimensions: Type.Array(Type.Object({ name: Type.String(), display_label: Type.String() })),
    operators: Type.Array(Type.Object({ name: Type.String(), value_type: Type.String() })),
    granularities: Type.Array(Type.Object({ name: Type.String(), display_label: Type.String() })),
  }),
});
