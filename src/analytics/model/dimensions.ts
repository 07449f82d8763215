import type { IdColumn, TextColumn } from "./columns.js";

/**
 * How a dimension's value is shown in rows. `none`: the value itself. The others replace the id by
 * a label from the record store (unknown ids show the raw id); `user` also adds `user_email`.
 */
export type LabelKind = "none" | "api_key" | "workspace" | "app" | "user";

/**
 * How filter values are resolved before the query runs. `api_key`: numeric id or 64-hex hash →
 * the organization's numeric key id; `workspace`: UUID checked against the organization. Values
 * that resolve to nothing become warnings and match no rows.
 */
export type ResolveKind = "none" | "api_key" | "workspace";

export interface DimensionDef {
  name: string;
  display_label: string;
  /** The stored column grouped and filtered on. */
  column: TextColumn | IdColumn;
  /** Type of the grouped value and of filter values. */
  value_type: "string" | "integer";
  /** Rows may lack a value (null): include_unset applies. */
  has_unset: boolean;
  /** Longest time_range when grouping by this dimension (per-generation dimensions: 31 days). */
  max_range_days: 365 | 31;
  label: LabelKind;
  resolve: ResolveKind;
  /** workspace: null (legacy activity) counts as the organization's default workspace. */
  null_is_default_workspace: boolean;
}

const d = (
  name: string,
  display_label: string,
  column: DimensionDef["column"],
  opts: Partial<Omit<DimensionDef, "name" | "display_label" | "column">> = {},
): DimensionDef => ({
  name,
  display_label,
  column,
  value_type: "string",
  has_unset: false,
  max_range_days: 365,
  label: "none",
  resolve: "none",
  null_is_default_workspace: false,
  ...opts,
});

const perGeneration = { has_unset: true, max_range_days: 31 } as const;

/** Every dimension, in GET /analytics/meta order (docs/wire-compatibility.md "Metrics and dimensions"). */
export const DIMENSIONS: readonly DimensionDef[] = [
  d("model", "Model", "model"),
  d("variant", "Variant", "variant", { has_unset: true }),
  d("api_key_id", "API Key", "api_key_id", { value_type: "integer", label: "api_key", resolve: "api_key" }),
  d("user", "User", "user_id", { has_unset: true, label: "user" }),
  d("workspace", "Workspace", "workspace_id", {
    label: "workspace",
    resolve: "workspace",
    null_is_default_workspace: true,
  }),
  d("app", "App", "app_id", { value_type: "integer", has_unset: true, label: "app" }),
  d("generation_id", "Generation ID", "id", { max_range_days: 31 }),
  d("provider", "Provider", "provider", { max_range_days: 31 }),
  d("origin", "Origin", "origin", perGeneration),
  d("country", "Country", "country", perGeneration),
  d("finish_reason", "Finish Reason", "finish_reason", perGeneration),
  d("external_user", "External User", "external_user", perGeneration),
  d("context_length_bucket", "Context Length", "context_length_bucket", { max_range_days: 31 }),
  // Null for ingested records that do not say, and for activity stored before it was kept.
  d("api", "API", "api", { has_unset: true }),
];

export const DIMENSION_BY_NAME: ReadonlyMap<string, DimensionDef> = new Map(
  DIMENSIONS.map((x) => [x.name, x]),
);
