import { MONEY_COLUMNS, type ActivityRow, type ColumnName } from "../activity/activity-row.js";
import { GENERATION_COLUMNS } from "../stores/activity-columns.js";
import { encodedOf, NULL_MARK, VALUE_SEPARATOR } from "../stores/column-texts.js";

/** The columns of a generation row Broadcast reads (selection and BroadcastGeneration). */
const READ = [
  "id",
  "created_at_ms",
  "api_key_hash",
  "workspace_id",
  "model",
  "provider",
  "app_id",
  "user_id",
  "external_user",
  "finish_reason",
  "tokens_prompt",
  "tokens_completion",
  "tokens_reasoning",
  "tokens_cached",
  "is_byok",
  "streamed",
  "cancelled",
  "usage_nano",
  "byok_usage_inference_nano",
  "latency_ms",
  "generation_time_ms",
  "api",
] as const satisfies readonly ColumnName[];

/** A generation row as Broadcast reads it: those columns of ActivityRow, typed as there. */
export type OutboxRow = Pick<ActivityRow, (typeof READ)[number]>;

/**
 * The rows of an outbox payload (ingest column texts, column-texts.ts), only the columns Broadcast
 * reads, decoded by their storage kind.
 */
export function rowsOfPayload(payload: string): OutboxRow[] {
  const g = encodedOf(payload).generations;
  if (g.rows) return g.rows.map((r) => ({ ...r }));
  const out: Record<string, unknown>[] = Array.from({ length: g.count }, () => ({}));
  if (g.count === 0) return [];
  for (let j = 0; j < GENERATION_COLUMNS.length; j++) {
    const col = GENERATION_COLUMNS[j];
    if (!col || !(READ as readonly string[]).includes(col.field)) continue;
    const values = (g.texts[j] ?? "").split(VALUE_SEPARATOR);
    for (let i = 0; i < g.count; i++) {
      const t = values[i] as string;
      let v: unknown;
      if (t === NULL_MARK) v = null;
      else if (col.kind === "string" || col.kind === "string?") v = t;
      else if (col.kind === "bool") v = t === "true";
      else if (MONEY_COLUMNS.has(col.field)) v = BigInt(t);
      else v = Number(t);
      (out[i] as Record<string, unknown>)[col.field] = v;
    }
  }
  return out as unknown as OutboxRow[];
}
