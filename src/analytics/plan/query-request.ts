/** The body of POST /analytics/query after JSON-schema validation (shapes only; rules live in the plan). */
export type FilterValue = string | number | readonly (string | number)[];

export interface QueryRequest {
  metrics: readonly string[];
  dimensions?: readonly string[];
  filters?: readonly {
    field: string;
    operator: string;
    value: FilterValue;
    include_unset?: boolean;
  }[];
  time_range?: { start: string; end: string };
  granularity?: string;
  limit?: number;
  group_limit?: number;
  order_by?: { field: string; direction: "asc" | "desc" };
  classifier_dimensions?: {
    classifier_id: string;
    dimension_names?: readonly string[];
    include_nulls?: boolean;
  };
  classifier_filters?: {
    classifier_id: string;
    filters: readonly { field: string; operator: string; value: FilterValue }[];
  };
}
