import { ACTIVITY_COLUMNS, type ActivityRow } from "../../activity/activity-row.js";
import { invalid } from "../../domain/errors.js";
import { requireDestinationRow } from "../../domain/destinations/get-destination.js";
import type { ActivityStore, BoundQuery } from "../../stores/activity-store.js";
import { GENERATION_COLUMNS } from "../../stores/activity-columns.js";
import type { RecordStore } from "../../stores/record-store.js";
import { signalOutboxWrite } from "../outbox/outbox-signal.js";
import { payloadOfRows } from "../payload-rows.js";

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

/**
 * Re-offers the generations of [from, to) in the destination's workspace to that destination
 * only: they are read from the activity store and written to the outbox like an ingest batch,
 * and the fan-out applies the destination's selection as it does at ingest (sampling decides the
 * same). Content is not in the activity store: a replay sends metadata only.
 */
export async function replayDestination(
  deps: { store: RecordStore; activity: ActivityStore; nowMs: number; queryTimeoutMs: number },
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
    await deps.store.db
      .insertInto("broadcast_batches")
      .values({
        organization_id: organizationId,
        created_at_ms: deps.nowMs,
        payload: payloadOfRows(page),
        contexts: null,
        destination_ids: JSON.stringify([row.id]),
        fanned_out: 0,
      })
      .execute();
    offered += page.length;
    if (truncated || rows.length < PAGE) break;
  }
  if (offered > 0) signalOutboxWrite();
  return {
    destination_id: row.id,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    offered,
    truncated,
  };
}
