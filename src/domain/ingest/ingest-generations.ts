import type { Clock } from "../../lib/clock.js";
import { ActivityTimeoutError, type ActivityStore } from "../../stores/activity-store.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import { payloadOfRows } from "../../stores/column-texts.js";
import type { LiveContext } from "../../broadcast/live-context.js";
import type { AcceptedOffer, AcceptedSink } from "./pipeline/accepted-sink.js";
import {
  inlinePreparer,
  preparedBatchOf,
  type BatchPreparer,
  type PreparedBatch,
} from "./pipeline/preparer-port.js";
import { writeExclusive } from "./pipeline/ingest-buffer.js";
import { recordAcceptance } from "./pipeline/record-acceptance.js";
import {
  acceptanceOf,
  checkRecords,
  normaliseBatch,
  tagsOf,
  type Batch,
  type KeyRef,
  type RefsNeeded,
  type ResolvedRefs,
} from "./records/normalise-batch.js";
import type { IngestInput } from "./records/read-body.js";
import { claimGenerationIds } from "./repos/seen-repo.js";
import { parkPending } from "./repos/pending-repo.js";
import { unavailableStore } from "../../stores/store-errors.js";
import { keysByHashes } from "../keys/key-repo.js";
import { activityDefaultWorkspaceId, workspaceIdsIn } from "../workspaces/workspace-repo.js";

export type { Batch, IngestInput };

export interface IngestResult {
  accepted: number;
  duplicates: number;
}

/** The organization's keys among the given hashes (deleted keys included: late activity counts). */
async function keysByHash(
  db: Db,
  organizationId: string,
  hashes: readonly string[],
): Promise<Map<string, KeyRef>> {
  const out = new Map<string, KeyRef>();
  for (const r of await keysByHashes(db, organizationId, hashes)) {
    out.set(r.hash, { id: Number(r.id), workspaceId: r.workspace_id, creatorUserId: r.creator_user_id });
  }
  return out;
}

/**
 * Lookups remembered per record store, keyed by organization and id, for facts that never change:
 * a key's id, workspace and creator (a deleted key's row stays), and that a workspace id exists
 * in an organization (ids are never reused or removed). Only hits are remembered: a key or
 * workspace created later is looked up. Past MAX_REMEMBERED entries the memory starts over.
 */
const MAX_REMEMBERED = 50_000;
const keyCache = new WeakMap<RecordStore, Map<string, KeyRef>>();
const workspaceCache = new WeakMap<RecordStore, Map<string, true>>();

async function remembered<V>(
  caches: WeakMap<RecordStore, Map<string, V>>,
  store: RecordStore,
  organizationId: string,
  ids: readonly string[],
  lookup: (db: Db, organizationId: string, missing: readonly string[]) => Promise<Map<string, V>>,
): Promise<Map<string, V>> {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new Map<string, V>()));
  const out = new Map<string, V>();
  const missing: string[] = [];
  for (const id of ids) {
    const v = cache.get(`${organizationId}:${id}`);
    if (v !== undefined) out.set(id, v);
    else missing.push(id);
  }
  if (missing.length > 0) {
    const found = await lookup(store.db, organizationId, missing);
    if (cache.size + found.size > MAX_REMEMBERED) cache.clear();
    for (const [id, v] of found) {
      out.set(id, v);
      cache.set(`${organizationId}:${id}`, v);
    }
  }
  return out;
}

const cachedKeys = (store: RecordStore, organizationId: string, hashes: readonly string[]) =>
  remembered(keyCache, store, organizationId, hashes, keysByHash);

const cachedWorkspaces = (store: RecordStore, organizationId: string, ids: readonly string[]) =>
  remembered(workspaceCache, store, organizationId, ids, async (db, org, missing) => {
    const found = await workspaceIdsIn(db, org, missing);
    return new Map([...found].map((id) => [id, true as const]));
  });

/** The record store's answers to what a batch references (remembered lookups). */
async function resolveRefs(
  store: RecordStore,
  organizationId: string,
  refs: RefsNeeded,
): Promise<ResolvedRefs> {
  const keys = await cachedKeys(store, organizationId, refs.hashes);
  const workspaces =
    refs.workspaceIds.length > 0
      ? new Set((await cachedWorkspaces(store, organizationId, refs.workspaceIds)).keys())
      : new Set<string>();
  // The one rule for legacy activity's workspace, shared with analytics, Broadcast and reconcile.
  const legacyWorkspace = refs.legacy ? await activityDefaultWorkspaceId(store.db, organizationId) : null;
  return { keys, workspaces, legacyWorkspace };
}

/**
 * The general path (ClickHouse, or any store another process may write too): in ONE record-store
 * transaction claim the ids, add the new records to the ledger, labels and activity version, and
 * write them to the activity store, which skips ids it already holds (only possible after a crash
 * between its write and the record-store commit); then commit. An activity store that is
 * unavailable does not fail the batch: its rows are parked in the record store, in the same
 * transaction, for a later pass to write (pipeline/pending-activity.ts).
 */
async function ingestChecked(
  store: RecordStore,
  activity: ActivityStore,
  batch: Batch,
  offer: AcceptedOffer | undefined,
  alsoInTransaction: ((trx: Db) => Promise<void>) | undefined,
  nowMs: number,
): Promise<number> {
  const { organizationId, rows } = batch;
  let offered = false;
  const accepted = await store.transaction(async (trx) => {
    // Sorted, so that concurrent batches sharing ids lock them in the same order (no deadlock).
    const claimed = await claimGenerationIds(trx, organizationId, rows.map((r) => r.id).sort(), store.caps);
    if (claimed.size === 0) return 0;
    const fresh = claimed.size === rows.length ? rows : rows.filter((r) => claimed.has(r.id));
    const { usage, apps, users } = acceptanceOf(batch, fresh);
    offered = await recordAcceptance(
      trx,
      store,
      organizationId,
      { counters: usage.rows(), apps, users },
      offer && { offer, ids: fresh.map((r) => r.id), payload: () => payloadOfRows(fresh) },
    );
    const tags = tagsOf(batch, fresh);
    try {
      await activity.insert(fresh, tags);
    } catch (err) {
      // Unavailable, or no answer in time (a write's existence check past its time limit).
      if (unavailableStore(err) !== "activity store" && !(err instanceof ActivityTimeoutError)) throw err;
      await parkPending(trx, organizationId, fresh, tags, nowMs);
    }
    await alsoInTransaction?.(trx);
    return fresh.length;
  });
  if (offered) offer?.sink.written();
  return accepted;
}

export interface IngestDeps {
  store: RecordStore;
  activity: ActivityStore;
  clock: Clock;
  /** Where bodies are parsed and validated for the single-writer path; default: inline. */
  preparer?: BatchPreparer | undefined;
  /**
   * What happens to a batch accepted with `broadcast` (accepted-sink.ts): Broadcast's outbox, wired
   * by the composition root. Needed only by callers that offer batches on.
   */
  accepted?: AcceptedSink | undefined;
}

/** How a batch is offered to Broadcast (docs/broadcast.md "Selection"). */
export interface IngestOptions {
  /**
   * Offer the accepted generations to the organization's destinations, through `deps.accepted`
   * (required then). Live ingest and the gateway: true; `gatehouse import`: false unless
   * `--broadcast`. Default false.
   */
  broadcast?: boolean;
  /** Served content and request details by generation id (the gateway's LiveContext). */
  liveContexts?: ReadonlyMap<string, LiveContext>;
  /**
   * More writes of the caller's, in the acceptance transaction (committed with the batch or not
   * at all); not run when every record is a duplicate. The gateway's detail rows.
   */
  alsoInTransaction?: (trx: Db) => Promise<void>;
}

/**
 * Ingests a batch of generation records for one organization (docs/activity.md), all or nothing:
 * a request body not yet parsed, or records (an array) already parsed.
 *
 * Crash safety without a distributed transaction: the record store decides which ids are new
 * (generations_seen), in the transaction that also holds the batch's rows (buffered for the
 * embedded store) or after the activity store has them (ClickHouse), so a crash loses nothing
 * acknowledged and a retry never counts a record twice. A repeated id inside the batch keeps its
 * first record; the others count as duplicates. See writeExclusive (embedded DuckDB,
 * ingest-buffer.ts) and ingestChecked (ClickHouse) for the two protocols.
 */
export async function ingestGenerations(
  deps: IngestDeps,
  organizationId: string,
  body: IngestInput | readonly unknown[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  const { store, activity, clock } = deps;
  const input: IngestInput = isRecordList(body) ? { format: "records", records: body } : body;
  const nowMs = clock.now().getTime();
  const offer = offerOf(deps, options, nowMs);
  const resolve = (refs: RefsNeeded) => resolveRefs(store, organizationId, refs);
  if (activity.exclusive) {
    const batch = await (deps.preparer ?? inlinePreparer).prepare(input, organizationId, nowMs, resolve);
    return acceptPrepared(deps, organizationId, batch, offer, options);
  }
  const checked = checkRecords(input, nowMs);
  const batch = normaliseBatch(checked, organizationId, await resolve(checked.refs));
  const accepted = await ingestChecked(store, activity, batch, offer, options.alsoInTransaction, nowMs);
  return { accepted, duplicates: batch.received - accepted };
}

/**
 * Ingests rows a trusted producer built from its own typed data (the gateway's served
 * generations: src/gateway/recording/generation-row.ts): no wire records to parse, check or
 * resolve, and money already in nano-USD. From here on the same acceptance as ingestGenerations:
 * ids claimed, ledger, labels, activity store, the accepted-batch sink, all or nothing.
 */
export async function ingestRows(
  deps: IngestDeps,
  batch: Batch,
  options: IngestOptions = {},
): Promise<IngestResult> {
  const nowMs = deps.clock.now().getTime();
  const offer = offerOf(deps, options, nowMs);
  if (deps.activity.exclusive) {
    return acceptPrepared(deps, batch.organizationId, preparedBatchOf(batch), offer, options);
  }
  const accepted = await ingestChecked(
    deps.store,
    deps.activity,
    batch,
    offer,
    options.alsoInTransaction,
    nowMs,
  );
  return { accepted, duplicates: batch.received - accepted };
}

/** How an accepted batch is offered on (options.broadcast), or undefined. */
function offerOf(deps: IngestDeps, options: IngestOptions, nowMs: number): AcceptedOffer | undefined {
  if (!options.broadcast) return undefined;
  if (!deps.accepted) {
    throw new Error("ingest: a batch offered on (broadcast) needs deps.accepted, the accepted-batch sink");
  }
  return { sink: deps.accepted, nowMs, contexts: options.liveContexts ?? null };
}

/** The single-writer path (embedded DuckDB) for a prepared batch; releases it. */
async function acceptPrepared(
  deps: IngestDeps,
  organizationId: string,
  batch: PreparedBatch,
  offer: AcceptedOffer | undefined,
  options: IngestOptions,
): Promise<IngestResult> {
  try {
    const exclusive = deps.activity.exclusive as NonNullable<ActivityStore["exclusive"]>;
    const accepted = await writeExclusive(
      deps.store,
      exclusive,
      organizationId,
      batch,
      offer,
      options.alsoInTransaction,
    );
    return { accepted, duplicates: batch.received - accepted };
  } finally {
    batch.release();
  }
}

const isRecordList = (b: IngestInput | readonly unknown[]): b is readonly unknown[] => Array.isArray(b);
