import { ACTIVITY_COLUMNS, type ActivityRow, type ClassificationRow } from "../activity/activity-row.js";

/**
 * Storage kinds of the activity tables, shared by every engine's DDL and inserter so that the
 * engines agree column by column. `created_at_ms` is stored as the timestamp column `created_at`.
 */
export type ColumnKind =
  "string" | "string?" | "timestamp" | "int64" | "int64?" | "bool" | "float64" | "float64?";

export interface StorageColumn<Row> {
  /** Column name in storage. */
  name: string;
  /** Field of the row object it is read from. */
  field: keyof Row & string;
  kind: ColumnKind;
}

const GENERATION_KINDS: Record<(typeof ACTIVITY_COLUMNS)[number], ColumnKind> = {
  organization_id: "string",
  id: "string",
  created_at_ms: "timestamp",
  api_key_id: "int64",
  api_key_hash: "string",
  workspace_id: "string?",
  model: "string",
  provider: "string",
  variant: "string?",
  app_id: "int64?",
  user_id: "string?",
  external_user: "string?",
  origin: "string?",
  country: "string?",
  finish_reason: "string?",
  context_length_bucket: "string",
  tokens_prompt: "int64",
  tokens_completion: "int64",
  tokens_reasoning: "int64",
  tokens_cached: "int64",
  is_byok: "bool",
  streamed: "bool",
  cancelled: "bool",
  response_cached: "bool",
  guardrail_invoked: "bool",
  usage_nano: "int64",
  byok_usage_inference_nano: "int64",
  usage_upstream_nano: "int64",
  usage_cache_nano: "int64",
  usage_data_nano: "int64",
  usage_web_nano: "int64",
  usage_upstream_web_nano: "int64",
  usage_file_nano: "int64",
  usage_upstream_file_nano: "int64",
  usage_web_fetch_nano: "int64",
  usage_upstream_web_fetch_nano: "int64",
  latency_ms: "float64",
  generation_time_ms: "float64?",
  throughput: "float64?",
};

const storageName = (field: string): string => (field === "created_at_ms" ? "created_at" : field);

/** Columns of `generations`, in ACTIVITY_COLUMNS order. */
export const GENERATION_COLUMNS: readonly StorageColumn<ActivityRow>[] = ACTIVITY_COLUMNS.map((field) => ({
  name: storageName(field),
  field,
  kind: GENERATION_KINDS[field],
}));

/** Columns of `generation_tags`. */
export const TAG_COLUMNS: readonly StorageColumn<ClassificationRow>[] = (
  [
    ["organization_id", "string"],
    ["generation_id", "string"],
    ["workspace_id", "string?"],
    ["created_at_ms", "timestamp"],
    ["classifier_id", "string"],
    ["dimension_name", "string"],
    ["value", "string"],
  ] as const
).map(([field, kind]) => ({ name: storageName(field), field, kind }));

/** Keeps the first row of each (organization_id, key) pair. */
export function firstPerKey<T>(rows: readonly T[], key: (r: T) => string): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const r of rows) {
    const k = key(r);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(r);
  }
  return out;
}

/** Rows grouped by organization, with the created_at range of each group (for pruning). */
export function byOrganization<T extends { organization_id: string; created_at_ms: number }>(
  rows: readonly T[],
): Map<string, { rows: T[]; minMs: number; maxMs: number }> {
  const out = new Map<string, { rows: T[]; minMs: number; maxMs: number }>();
  for (const r of rows) {
    const g = out.get(r.organization_id);
    if (!g) out.set(r.organization_id, { rows: [r], minMs: r.created_at_ms, maxMs: r.created_at_ms });
    else {
      g.rows.push(r);
      if (r.created_at_ms < g.minMs) g.minMs = r.created_at_ms;
      if (r.created_at_ms > g.maxMs) g.maxMs = r.created_at_ms;
    }
  }
  return out;
}

/** Which of `ids` an organization's rows in `table` already hold, created in [minMs, maxMs]. */
export type ExistingIds = (
  table: "generations" | "generation_tags",
  idColumn: "id" | "generation_id",
  organizationId: string,
  minMs: number,
  maxMs: number,
  ids: readonly string[],
) => Promise<Set<string>>;

/**
 * The part of a batch a store does not hold yet (ActivityStore.insert's idempotency): the first
 * row per (organization, id), minus ids the store already has; tags of generations that have none
 * yet. The lookups are per organization and restricted to the batch's created_at range, so they
 * prune by zone maps (DuckDB) or the primary key (ClickHouse).
 */
export async function unseenOf(
  rows: readonly ActivityRow[],
  tags: readonly ClassificationRow[],
  existing: ExistingIds,
): Promise<{ rows: ActivityRow[]; tags: ClassificationRow[] }> {
  const newRows: ActivityRow[] = [];
  const unique = firstPerKey(rows, (r) => `${r.organization_id}\u0000${r.id}`);
  for (const [org, g] of byOrganization(unique)) {
    const ids = g.rows.map((r) => r.id);
    const have = await existing("generations", "id", org, g.minMs, g.maxMs, ids);
    for (const r of g.rows) if (!have.has(r.id)) newRows.push(r);
  }
  const newTags: ClassificationRow[] = [];
  for (const [org, g] of byOrganization(tags)) {
    const ids = [...new Set(g.rows.map((t) => t.generation_id))];
    const have = await existing("generation_tags", "generation_id", org, g.minMs, g.maxMs, ids);
    for (const t of g.rows) if (!have.has(t.generation_id)) newTags.push(t);
  }
  return { rows: newRows, tags: newTags };
}
