import { invalid } from "../../domain/errors.js";
import { requireDestinationRow } from "../../domain/destinations/get-destination.js";
import { sessionIdsOf } from "../../domain/generation-details/generation-details-repo.js";
import type { ActivityStore, ReplayCursor } from "../../stores/activity-store.js";
import { payloadOfRows } from "../../stores/column-texts.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { LiveContext } from "../live-context.js";
import { insertOutboxBatch } from "../outbox/batches-repo.js";
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
  const sessions = await sessionIdsOf(store.db, organizationId, ids);
  if (sessions.size === 0) return null;
  const out: Record<string, LiveContext> = {};
  for (const [id, sessionId] of sessions) {
    out[id] = {
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
  }
  return out;
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
  let after: ReplayCursor | null = null;
  for (;;) {
    const rows = await deps.activity.generationsForReplay(
      { organizationId, workspaceId: row.workspace_id, fromMs, toMs, after, limit: PAGE },
      { timeoutMs: deps.queryTimeoutMs },
    );
    if (rows.length === 0) break;
    let page = rows;
    if (offered + page.length > MAX_REPLAY) {
      page = page.slice(0, MAX_REPLAY - offered);
      truncated = true;
    }
    const contexts = await sessionContexts(
      deps.store,
      organizationId,
      page.map((r) => r.id),
    );
    await insertOutboxBatch(deps.store.db, {
      organizationId,
      createdAtMs: deps.nowMs,
      payload: payloadOfRows(page),
      contexts: contexts === null ? null : JSON.stringify(contexts),
      destinationIds: [row.id],
    });
    offered += page.length;
    if (truncated || rows.length < PAGE) break;
    const last = rows[rows.length - 1] as (typeof rows)[number];
    after = { createdAtMs: last.created_at_ms, id: last.id };
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
