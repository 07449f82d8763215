import type { Db } from "../../stores/record-store.js";
import { QueryTemplate } from "../../stores/query-template.js";

/**
 * What the gateway knows of a generation it served beyond the analytics record (the `detail`
 * column of `gateway_generations`, stored as JSON): GET /generation shows it, a Broadcast replay
 * reads its session id. Money as decimal nano-USD strings.
 */
export interface GenerationDetail {
  model: string;
  provider_name: string;
  /** The API surface (absent from details stored before it was kept: chat completions). */
  api?: string;
  app_id: number | null;
  http_referer: string | null;
  external_user: string | null;
  session_id: string | null;
  tokens_prompt: number;
  tokens_completion: number;
  tokens_cached: number;
  tokens_reasoning: number;
  usage_nano: string;
  byok_nano: string;
  is_byok: boolean;
  latency_ms: number;
  generation_time_ms: number;
  finish_reason: string | null;
  streamed: boolean;
  cancelled: boolean;
  upstream_id: string | null;
  /** `byok` is absent from records written before it was kept per attempt. */
  attempts: { provider: string; model: string; status: number | null; durationMs: number; byok?: boolean }[];
}

/** One served generation's stored details and who made it. */
export interface StoredGenerationDetail {
  organizationId: string;
  id: string;
  keyHash: string;
  workspaceId: string;
  /** ISO 8601. */
  createdAt: string;
  detail: GenerationDetail;
}

/** The stored JSON as a GenerationDetail: parsed here only. Throws on text that is not JSON. */
const parseDetail = (text: string): GenerationDetail => JSON.parse(text) as GenerationDetail;

/**
 * Detail rows per insert statement at most. A batch inserts its details in compiled statements of
 * this many rows (and one for the rest): one per row count, compiled once, instead of building
 * and compiling a statement for every batch larger than this (Kysely's builder took ~7 µs a record
 * in a profile of 20-record flushes 10 ms apart on a slow VM; docs/performance.md).
 */
const COMPILED_DETAILS_MAX = 16;

/** Six values per row: organization_id, id, key_hash, workspace_id, created_at, detail. */
const compiledDetails = new QueryTemplate((db: Db, shape, ...v: string[]) =>
  db
    .insertInto("gateway_generations")
    .values(
      Array.from({ length: Number(shape) }, (_, r) => {
        const [organization_id, id, key_hash, workspace_id, created_at, detail] = v.slice(
          r * 6,
          r * 6 + 6,
        ) as [string, string, string, string, string, string];
        return { organization_id, id, key_hash, workspace_id, created_at, detail };
      }),
    )
    .onConflict((oc) => oc.columns(["organization_id", "id"]).doNothing())
    .compile(),
);

/**
 * Stores the details of served generations. Idempotent: an (organization, id) already stored is
 * left as it is, so a batch may be retried.
 */
export async function insertGenerationDetails(
  db: Db,
  records: readonly StoredGenerationDetail[],
): Promise<void> {
  for (let start = 0; start < records.length; start += COMPILED_DETAILS_MAX) {
    const chunk = records.slice(start, start + COMPILED_DETAILS_MAX);
    const v: string[] = [];
    for (const r of chunk) {
      v.push(r.organizationId, r.id, r.keyHash, r.workspaceId, r.createdAt, JSON.stringify(r.detail));
    }
    await compiledDetails.execute(db, String(chunk.length), ...v);
  }
}

/** One generation's details in its organization; undefined when it has none. */
export async function findGenerationDetail(
  db: Db,
  organizationId: string,
  id: string,
): Promise<StoredGenerationDetail | undefined> {
  const row = await db
    .selectFrom("gateway_generations")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    organizationId: row.organization_id,
    id: row.id,
    keyHash: row.key_hash,
    workspaceId: row.workspace_id,
    createdAt: row.created_at,
    detail: parseDetail(row.detail),
  };
}

/** Ids per statement of sessionIdsOf. */
const LOOKUP = 1_000;

/**
 * The session ids of those of `ids` that the gateway served with one (ingested generations have
 * no details; details that do not parse count as none).
 */
export async function sessionIdsOf(
  db: Db,
  organizationId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += LOOKUP) {
    const rows = await db
      .selectFrom("gateway_generations")
      .select(["id", "detail"])
      .where("organization_id", "=", organizationId)
      .where("id", "in", ids.slice(i, i + LOOKUP))
      .execute();
    for (const r of rows) {
      let sessionId: unknown;
      try {
        sessionId = parseDetail(r.detail).session_id;
      } catch {
        continue;
      }
      if (typeof sessionId === "string") out.set(r.id, sessionId);
    }
  }
  return out;
}
