import { ACTIVITY_COLUMNS, type ActivityRow } from "../../activity/activity-row.js";
import { invalid } from "../../domain/errors.js";
import { requireDestinationRow } from "../../domain/destinations/get-destination.js";
import type { ActivityStore, BoundQuery } from "../../stores/activity-store.js";
import { GENERATION_COLUMNS } from "../../stores/activity-columns.js";
import { payloadOfRows } from "../../stores/column-texts.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { LiveContext } from "../live-context.js";
import type { OutboxSignal } from "../outbox/outbox-signal.js";

/** Generations one replay re-offers at most (narrow the range for more). */
export const MAX_REPLAY = 1_000_000;
const PAGE = 10_000;

export interface ReplayResult {
  destination_id: string;
  from: string;
  to: string;
  /** Generations of the range re-offered to the destination (selection applies as at ingest). */
  offered: number;
  /** More than MAX_REPLAY generations were in the range: only the first were offered. */
  truncated: boolean;
}

const MONEY = new Set(GENERATION_COLUMNS.filter((c) => c.field.endsWith("_nano")).map((c) => c.field));

function pageQuery(
  dialect: ActivityStore["dialect"],
  organizationId: string,
  workspaceId: string,
  fromMs: number,
  toMs: number,
  offset: number,
): BoundQuery {
  const cols = ACTIVITY_COLUMNS.filter((c) => c !== "created_at_ms").join(", ");
  const sql =
    dialect === "duckdb"
      ? `SELECT ${cols}, epoch_ms(created_at) AS created_at_ms FROM generations
WHERE organization_id = $org AND (workspace_id = $ws OR workspace_id IS NULL)
  AND created_at >= epoch_ms(CAST($from AS BIGINT)) AND created_at < epoch_ms(CAST($to AS BIGINT))
ORDER BY created_at, id LIMIT ${PAGE} OFFSET ${offset}`
      : `SELECT ${cols}, toUnixTimestamp64Milli(created_at) AS created_at_ms FROM generations
WHERE organization_id = {org:String} AND (workspace_id = {ws:String} OR workspace_id IS NULL)
  AND created_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND created_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
ORDER BY created_at, id LIMIT ${PAGE} OFFSET ${offset}`;
  return { sql, params: { org: organizationId, ws: workspaceId, from: fromMs, to: toMs } };
}

/** A row of the query as an ActivityRow (numbers, money as bigint, booleans). */
function toActivityRow(r: Record<string, unknown>): ActivityRow {
  const out: Record<string, unknown> = {};
  for (const c of GENERATION_COLUMNS) {
    const v = r[c.field];
    if (v === null || v === undefined) out[c.field] = null;
    else if (MONEY.has(c.field)) out[c.field] = BigInt(v as bigint | number | string);
    else if (c.kind === "bool") out[c.field] = Boolean(v);
    else if (c.kind === "string" || c.kind === "string?")
      out[c.field] = typeof v === "string" ? v : JSON.stringify(v);
    else out[c.field] = Number(v);
  }
  return out as unknown as ActivityRow;
}

const LOOKUP = 1_000;

/**
 * The session ids of the generations the gateway served, from their details (the activity store
 * does not hold them), as LiveContexts with nothing else: selection samples by session and filter
 * rules read `session_id`, so a replay decides as the live delivery did. Null when none has one.
 */
async function sessionContexts(
  store: RecordStore,
  organizationId: string,
  ids: readonly string[],
): Promise<Record<string, LiveContext> | null> {
  const out: Record<string, LiveContext> = {};
  let n = 0;
  for (let i = 0; i < ids.length; i += LOOKUP) {
    const rows = await store.db
      .selectFrom("gateway_generations")
      .select(["id", "detail"])
      .where("organization_id", "=", organizationId)
      .where("id", "in", ids.slice(i, i + LOOKUP))
      .execute();
    for (const r of rows) {
      let sessionId: unknown = null;
      try {
        sessionId = (JSON.parse(r.detail) as { session_id?: unknown }).session_id;
      } catch {
        continue;
      }
      if (typeof sessionId !== "string") continue;
      out[r.id] = {
        input: null,
        output: null,
        params: null,
        trace: null,
        attempts: [],
        appTitle: null,
        referer: null,
        sessionId,
        promptCostUsd: null,
        completionCostUsd: null,
      };
      n++;
    }
  }
  return n === 0 ? null : out;
}

/**
 * Re-offers the generations of [from, to) in the destination's workspace to that destination
 * only: they are read from the activity store and written to the outbox like an ingest batch,
 * and the fan-out applies the destination's selection as it does at ingest (sampling decides the
 * same: the session ids of served generations are read from their gateway details). Content is
 * not in the activity store: a replay sends metadata only.
 */
export async function replayDestination(
  deps: {
    store: RecordStore;
    activity: ActivityStore;
    nowMs: number;
    queryTimeoutMs: number;
    /** Wakes this process's Broadcast worker; absent (the CLI): the workers find the rows by polling. */
    outboxSignal?: OutboxSignal;
  },
  organizationId: string,
  destinationId: string,
  from: string,
  to: string,
): Promise<ReplayResult> {
  const fromMs = Date.parse(from);
  const toMs = Date.parse(to);
  if (Number.isNaN(fromMs)) throw invalid("from: must be an RFC 3339 timestamp");
  if (Number.isNaN(toMs)) throw invalid("to: must be an RFC 3339 timestamp");
  if (toMs <= fromMs) throw invalid("to: must be after from");
  const row = await requireDestinationRow(deps.store.db, organizationId, destinationId);
  let offered = 0;
  let truncated = false;
  for (let offset = 0; ; offset += PAGE) {
    const rows = await deps.activity.query(
      pageQuery(deps.activity.dialect, organizationId, row.workspace_id, fromMs, toMs, offset),
      { timeoutMs: deps.queryTimeoutMs, organizationId },
    );
    if (rows.length === 0) break;
    let page = rows.map(toActivityRow);
    if (offered + page.length > MAX_REPLAY) {
      page = page.slice(0, MAX_REPLAY - offered);
      truncated = true;
    }
    const contexts = await sessionContexts(
      deps.store,
      organizationId,
      page.map((r) => r.id),
    );
    await deps.store.db
      .insertInto("broadcast_batches")
      .values({
        organization_id: organizationId,
        created_at_ms: deps.nowMs,
        payload: payloadOfRows(page),
        contexts: contexts === null ? null : JSON.stringify(contexts),
        destination_ids: JSON.stringify([row.id]),
        fanned_out: 0,
      })
      .execute();
    offered += page.length;
    if (truncated || rows.length < PAGE) break;
  }
  if (offered > 0) deps.outboxSignal?.written();
  return {
    destination_id: row.id,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    offered,
    truncated,
  };
}
