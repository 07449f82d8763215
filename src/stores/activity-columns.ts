import {
  ACTIVITY_COLUMNS,
  FIRST_STORAGE_ORDER,
  type ActivityRow,
  type ClassificationRow,
} from "../activity/activity-row.js";
import type { FeedbackRow } from "../activity/feedback-row.js";
import { DERIVED_COLUMNS, GENERATION_FIELDS, type ColumnKind } from "../activity/generation-fields.js";

export type { ColumnKind };

export interface StorageColumn<Row> {
  /** Column name in storage. */
  name: string;
  /** Field of the row object it is read from. */
  field: keyof Row & string;
  kind: ColumnKind;
}

/**
 * Storage kind of every column of `generations`, from the field table (wire columns) and its
 * derived columns, so that every engine's DDL and inserter agree column by column.
 */
const GENERATION_KINDS = new Map<string, ColumnKind>([
  ...GENERATION_FIELDS.flatMap((f) =>
    "column" in f.target ? [[f.target.column, f.target.kind] as const] : [],
  ),
  ...Object.entries(DERIVED_COLUMNS),
]);

if (GENERATION_KINDS.size !== ACTIVITY_COLUMNS.length) {
  throw new Error("the field table's columns and ACTIVITY_COLUMNS differ");
}

function kindOf(field: string): ColumnKind {
  const kind = GENERATION_KINDS.get(field);
  if (kind === undefined) throw new Error(`activity column ${field}: not in the field table`);
  return kind;
}

const storageName = (field: string): string => (field === "created_at_ms" ? "created_at" : field);

/**
 * Columns of `generations`, in ACTIVITY_COLUMNS order (the storage order of every engine's DDL;
 * `created_at_ms` is stored as the timestamp column `created_at`).
 */
export const GENERATION_COLUMNS: readonly StorageColumn<ActivityRow>[] = ACTIVITY_COLUMNS.map((field) => ({
  name: storageName(field),
  field,
  kind: kindOf(field),
}));

/**
 * The columns of the first schema (each engine's CREATE TABLE) and those added since, which each
 * engine adds to an existing table (ALTER TABLE … ADD COLUMN IF NOT EXISTS), after the others.
 */
export const FIRST_GENERATION_COLUMNS = GENERATION_COLUMNS.slice(0, FIRST_STORAGE_ORDER.length);
export const ADDED_GENERATION_COLUMNS = GENERATION_COLUMNS.slice(FIRST_STORAGE_ORDER.length);

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

/**
 * Columns of `generation_feedback`: feedback submissions, at their generation's time
 * (`created_at`, which orders and prunes them as it does tags), joined to `generations` by
 * analytics (src/analytics/emit/build-select.ts).
 */
export const FEEDBACK_COLUMNS: readonly StorageColumn<FeedbackRow>[] = (
  [
    ["organization_id", "string"],
    ["generation_id", "string"],
    ["created_at_ms", "timestamp"],
    ["feedback_id", "string"],
    ["category", "string"],
    ["submitted_at_ms", "timestamp"],
  ] as const
).map(([field, kind]) => ({
  name: field === "submitted_at_ms" ? "submitted_at" : storageName(field),
  field,
  kind,
}));

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
  table: "generations" | "generation_tags" | "generation_feedback",
  idColumn: "id" | "generation_id" | "feedback_id",
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

/**
 * The feedback rows a store does not hold yet (ActivityStore.insertFeedback's idempotency): the
 * first row per (organization, feedback_id), minus those already stored, looked up per
 * organization in the rows' created_at range (the generations' times) as unseenOf does.
 */
export async function unseenFeedbackOf(
  rows: readonly FeedbackRow[],
  existing: ExistingIds,
): Promise<FeedbackRow[]> {
  const out: FeedbackRow[] = [];
  const unique = firstPerKey(rows, (r) => `${r.organization_id}\u0000${r.feedback_id}`);
  for (const [org, g] of byOrganization(unique)) {
    const ids = g.rows.map((r) => r.feedback_id);
    const have = await existing("generation_feedback", "feedback_id", org, g.minMs, g.maxMs, ids);
    for (const r of g.rows) if (!have.has(r.feedback_id)) out.push(r);
  }
  return out;
}
