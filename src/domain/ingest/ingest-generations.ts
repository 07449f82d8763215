import {
  contextLengthBucket,
  throughputOf,
  type ActivityRow,
  type ClassificationRow,
} from "../../activity/activity-row.js";
import type { Clock } from "../../lib/clock.js";
import type { ActivityStore, ExclusiveActivityWriter, StagedActivity } from "../../stores/activity-store.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import { DomainError, invalid } from "../errors.js";
import type { DialectCaps } from "../../stores/dialect.js";
import { addUsageTally, UsageTally } from "../usage/ledger.js";
import { bumpActivityVersion } from "./activity-version.js";
import { upsertAppLabels, upsertUserLabels, type UserLabel } from "./labels-repo.js";
import { newId } from "../../lib/ids.js";
import { addInflight, removeInflight } from "./inflight-repo.js";
import { IngestGate } from "./ingest-gate.js";
import { recoverInflight } from "./recover-inflight.js";
import { claimGenerationIds } from "./seen-repo.js";
import { MAX_RECORDS, parseRecords, Problems, type ParsedRecord } from "./validate-generations.js";

export interface IngestResult {
  accepted: number;
  duplicates: number;
}

export interface KeyRef {
  id: number;
  workspaceId: string;
  creatorUserId: string | null;
}

const LOOKUP_CHUNK = 1_000;

/** The organization's keys among the given hashes (deleted keys included: late activity counts). */
async function keysByHash(
  db: Db,
  organizationId: string,
  hashes: readonly string[],
): Promise<Map<string, KeyRef>> {
  const out = new Map<string, KeyRef>();
  for (let i = 0; i < hashes.length; i += LOOKUP_CHUNK) {
    const rows = await db
      .selectFrom("api_keys")
      .select(["id", "hash", "workspace_id", "creator_user_id"])
      .where("organization_id", "=", organizationId)
      .where("hash", "in", hashes.slice(i, i + LOOKUP_CHUNK))
      .execute();
    for (const r of rows) {
      out.set(r.hash, { id: Number(r.id), workspaceId: r.workspace_id, creatorUserId: r.creator_user_id });
    }
  }
  return out;
}

async function workspacesOf(db: Db, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
    const rows = await db
      .selectFrom("workspaces")
      .select("id")
      .where("organization_id", "=", organizationId)
      .where("id", "in", ids.slice(i, i + LOOKUP_CHUNK))
      .execute();
    for (const r of rows) out.add(r.id);
  }
  return out;
}

async function defaultWorkspace(db: Db, organizationId: string): Promise<string | null> {
  const row = await db
    .selectFrom("workspaces")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("is_default", "=", 1)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return row?.id ?? null;
}

/** `{"generations": [...]}` → the list, or the problem with the envelope itself. */
export function recordsOf(body: unknown): unknown[] {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("body: must be a JSON object");
  const g = (body as { generations?: unknown }).generations;
  if (g === undefined) throw invalid("generations: is required");
  if (!Array.isArray(g)) throw invalid("generations: must be an array");
  if (g.length === 0) throw invalid("generations: at least 1 record");
  if (g.length > MAX_RECORDS) {
    throw new DomainError("payload_too_large", `generations: at most ${MAX_RECORDS} records per request`);
  }
  return g;
}

export function toRow(r: ParsedRecord, organizationId: string, key: KeyRef): ActivityRow {
  return {
    organization_id: organizationId,
    id: r.id,
    created_at_ms: r.createdAtMs,
    api_key_id: key.id,
    api_key_hash: r.apiKeyHash,
    workspace_id: r.workspaceId === undefined ? key.workspaceId : r.workspaceId,
    model: r.model,
    provider: r.provider,
    variant: r.variant,
    app_id: r.appId,
    user_id: r.userId === undefined ? key.creatorUserId : r.userId,
    external_user: r.externalUser,
    origin: r.origin,
    country: r.country,
    finish_reason: r.finishReason,
    context_length_bucket: contextLengthBucket(r.tokensPrompt),
    tokens_prompt: r.tokensPrompt,
    tokens_completion: r.tokensCompletion,
    tokens_reasoning: r.tokensReasoning,
    tokens_cached: r.tokensCached,
    is_byok: r.isByok,
    streamed: r.streamed,
    cancelled: r.cancelled,
    response_cached: r.responseCached,
    guardrail_invoked: r.guardrailInvoked,
    usage_nano: r.usageNano,
    byok_usage_inference_nano: r.byokUsageInferenceNano,
    usage_upstream_nano: r.usageUpstreamNano,
    usage_cache_nano: r.usageCacheNano,
    usage_data_nano: r.usageDataNano,
    usage_web_nano: r.usageWebNano,
    usage_upstream_web_nano: r.usageUpstreamWebNano,
    usage_file_nano: r.usageFileNano,
    usage_upstream_file_nano: r.usageUpstreamFileNano,
    usage_web_fetch_nano: r.usageWebFetchNano,
    usage_upstream_web_fetch_nano: r.usageUpstreamWebFetchNano,
    latency_ms: r.latencyMs,
    generation_time_ms: r.generationTimeMs,
    throughput: throughputOf(r.tokensCompletion, r.generationTimeMs),
  };
}

/** A validated batch, normalised: one row per distinct id (the first record wins). */
interface Batch {
  organizationId: string;
  rows: ActivityRow[];
  tagsById: Map<string, ClassificationRow[]>;
  labelSource: Map<string, ParsedRecord>;
  keys: Map<string, KeyRef>;
  legacyWorkspace: string | null;
  /** created_at range of the rows. */
  minMs: number;
  maxMs: number;
}

/** What the record store must learn about a set of accepted rows. */
interface Acceptance {
  usage: UsageTally;
  apps: Map<number, string>;
  users: Map<string, UserLabel>;
}

function tagsOf(batch: Batch, rows: readonly ActivityRow[]): ClassificationRow[] {
  if (batch.tagsById.size === 0) return [];
  const out: ClassificationRow[] = [];
  for (const r of rows) {
    const tags = batch.tagsById.get(r.id);
    if (tags) for (const t of tags) out.push(t);
  }
  return out;
}

function acceptanceOf(batch: Batch, rows: readonly ActivityRow[]): Acceptance {
  const usage = new UsageTally();
  const apps = new Map<number, string>();
  const users = new Map<string, UserLabel>();
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as ActivityRow;
    usage.add(
      batch.organizationId,
      r.api_key_hash,
      // Legacy activity (no workspace) counts toward the default workspace, as analytics shows it.
      r.workspace_id ?? batch.legacyWorkspace ?? (batch.keys.get(r.api_key_hash) as KeyRef).workspaceId,
      r.created_at_ms,
      r.usage_nano,
      r.byok_usage_inference_nano,
    );
    const src = batch.labelSource.get(r.id) as ParsedRecord;
    if (r.app_id !== null && src.appTitle !== null) apps.set(r.app_id, src.appTitle);
    if (r.user_id !== null && (src.userName !== null || src.userEmail !== null)) {
      const prev = users.get(r.user_id);
      users.set(r.user_id, {
        name: src.userName ?? prev?.name ?? null,
        email: src.userEmail ?? prev?.email ?? null,
      });
    }
  }
  return { usage, apps, users };
}

/** Ledger, labels and activity version for accepted rows. Call inside the batch's transaction. */
async function recordAcceptance(
  trx: Db,
  caps: DialectCaps,
  organizationId: string,
  a: Acceptance,
): Promise<void> {
  await addUsageTally(trx, a.usage, caps);
  if (a.apps.size > 0) await upsertAppLabels(trx, organizationId, a.apps, caps);
  if (a.users.size > 0) await upsertUserLabels(trx, organizationId, a.users, caps);
  await bumpActivityVersion(trx, organizationId);
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
    const found = await workspacesOf(db, org, missing);
    return new Map([...found].map((id) => [id, true as const]));
  });

/** Validates, resolves references and normalises; throws the 400 listing every problem. */
async function prepareBatch(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  items: readonly unknown[],
): Promise<Batch> {
  const problems = new Problems();
  const parsed = parseRecords(items, clock.now().getTime(), problems);

  // References: keys and explicit workspaces must belong to the caller's organization.
  const hashes = [...new Set(parsed.map((r) => r.apiKeyHash))];
  const keys = await cachedKeys(store, organizationId, hashes);
  const explicit = [
    ...new Set(parsed.flatMap((r) => (typeof r.workspaceId === "string" ? [r.workspaceId] : []))),
  ];
  const workspaces =
    explicit.length > 0 ? await cachedWorkspaces(store, organizationId, explicit) : new Map<string, true>();
  for (const r of parsed) {
    if (!keys.has(r.apiKeyHash)) {
      problems.add(
        r.index,
        `generations[${r.index}].api_key_hash: no key with this hash in the organization`,
      );
    }
    if (typeof r.workspaceId === "string" && !workspaces.has(r.workspaceId)) {
      problems.add(r.index, `generations[${r.index}].workspace_id: no such workspace in the organization`);
    }
  }
  if (problems.total > 0) {
    const list = problems.sorted();
    throw invalid(list[0] ?? "generations: invalid", { problems: list, problem_count: problems.total });
  }

  // Normalise; a repeated id inside the batch keeps its first record.
  const legacyWorkspace = parsed.some((r) => r.workspaceId === null)
    ? await defaultWorkspace(store.db, organizationId)
    : null;
  const rows: ActivityRow[] = [];
  const tagsById = new Map<string, ClassificationRow[]>();
  const labelSource = new Map<string, ParsedRecord>();
  let minMs = Infinity;
  let maxMs = -Infinity;
  for (const r of parsed) {
    if (labelSource.has(r.id)) continue;
    labelSource.set(r.id, r);
    const row = toRow(r, organizationId, keys.get(r.apiKeyHash) as KeyRef);
    rows.push(row);
    if (row.created_at_ms < minMs) minMs = row.created_at_ms;
    if (row.created_at_ms > maxMs) maxMs = row.created_at_ms;
    if (r.classifications.length > 0) {
      tagsById.set(
        r.id,
        r.classifications.map((c) => ({
          organization_id: organizationId,
          generation_id: r.id,
          workspace_id: row.workspace_id,
          created_at_ms: row.created_at_ms,
          ...c,
        })),
      );
    }
  }
  return { organizationId, rows, tagsById, labelSource, keys, legacyWorkspace, minMs, maxMs };
}

/**
 * One gate per single-writer activity store (see IngestGate), keyed by the store's owner so that
 * wrappers of one store share it; a new session (the store opened again) gets a new gate, which
 * recovers first.
 */
const gates = new Map<string, { session: string; gate: IngestGate }>();

function gateOf(writer: ExclusiveActivityWriter): IngestGate {
  const known = gates.get(writer.owner);
  if (known?.session === writer.session) return known.gate;
  const gate = new IngestGate();
  gates.set(writer.owner, { session: writer.session, gate });
  return gate;
}

/**
 * The fast path on a single-writer activity store (embedded DuckDB). The batch's rows are staged
 * in an activity transaction of their own before the record-store transaction (so building and
 * appending them is not serialised with other batches), and an in-flight marker naming the
 * batch's ids is committed. In ONE record-store transaction: claim the ids; if some were already
 * accepted, restage only the new ones; add them to the ledger, labels and activity version;
 * delete the marker; commit the staged activity rows; then the record store commits. No
 * existence check in the activity store is needed: a row can be there without its id accepted
 * only after a batch failed between the two commits, and such a batch's marker is recovered
 * (its unaccepted rows deleted) before any other batch is written (IngestGate).
 */
async function ingestExclusive(
  store: RecordStore,
  writer: ExclusiveActivityWriter,
  batch: Batch,
): Promise<number> {
  const g = gateOf(writer);
  await g.enter(() => recoverInflight(store.db, writer));
  try {
    const { organizationId, rows } = batch;
    // Staging runs on the engine's threads while the marker is written (which waits for the record
    // store whenever another batch's transaction holds it).
    const staging = writer.stage(rows, tagsOf(batch, rows));
    staging.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
    let staged: StagedActivity | null = null;
    try {
      const acceptance = acceptanceOf(batch, rows);
      const token = newId();
      await addInflight(store.db, {
        token,
        owner: writer.owner,
        organizationId,
        minMs: batch.minMs,
        maxMs: batch.maxMs,
        ids: rows.map((r) => r.id),
      });
      staged = await staging;
      return await g.commit((beforeActivityCommit) =>
        store.transaction(async (trx) => {
          // Sorted, so that concurrent batches sharing ids lock them in the same order (no deadlock).
          const claimed = await claimGenerationIds(
            trx,
            organizationId,
            rows.map((r) => r.id).sort(),
            store.caps,
          );
          await removeInflight(trx, token);
          let current = staged as StagedActivity;
          if (claimed.size === 0) {
            await current.abort();
            return 0;
          }
          let fresh = rows;
          let accept = acceptance;
          if (claimed.size < rows.length) {
            await current.abort();
            fresh = rows.filter((r) => claimed.has(r.id));
            staged = current = await writer.stage(fresh, tagsOf(batch, fresh));
            accept = acceptanceOf(batch, fresh);
          }
          await recordAcceptance(trx, store.caps, organizationId, accept);
          await beforeActivityCommit();
          await current.commit();
          return fresh.length;
        }),
      );
    } finally {
      // No-op once committed; a batch that failed before its staging finished drops it too.
      if (staged) await staged.abort();
      else
        await staging.then(
          (s) => s.abort(),
          () => undefined,
        );
    }
  } finally {
    g.leave();
  }
}

/**
 * The general path (ClickHouse, or any store another process may write too): in ONE record-store
 * transaction claim the ids, add the new records to the ledger, labels and activity version, and
 * write them to the activity store, which skips ids it already holds (only possible after a crash
 * between its write and the record-store commit); then commit.
 */
async function ingestChecked(store: RecordStore, activity: ActivityStore, batch: Batch): Promise<number> {
  const { organizationId, rows } = batch;
  return store.transaction(async (trx) => {
    // Sorted, so that concurrent batches sharing ids lock them in the same order (no deadlock).
    const claimed = await claimGenerationIds(trx, organizationId, rows.map((r) => r.id).sort(), store.caps);
    if (claimed.size === 0) return 0;
    const fresh = claimed.size === rows.length ? rows : rows.filter((r) => claimed.has(r.id));
    await recordAcceptance(trx, store.caps, organizationId, acceptanceOf(batch, fresh));
    await activity.insert(fresh, tagsOf(batch, fresh));
    return fresh.length;
  });
}

/**
 * Ingests a batch of generation records for one organization (spec/activity.md), all or nothing.
 *
 * Crash safety without a distributed transaction: the record store decides which ids are new
 * (generations_seen), and the activity rows are committed before the record-store transaction
 * that accepts them, so a crash loses nothing acknowledged and a retry never counts a record
 * twice. A repeated id inside the batch keeps its first record; the others count as duplicates.
 * See ingestExclusive (embedded DuckDB) and ingestChecked (ClickHouse) for the two protocols.
 */
export async function ingestGenerations(
  deps: { store: RecordStore; activity: ActivityStore; clock: Clock },
  organizationId: string,
  items: readonly unknown[],
): Promise<IngestResult> {
  const { store, activity, clock } = deps;
  const batch = await prepareBatch(store, clock, organizationId, items);
  const accepted = activity.exclusive
    ? await ingestExclusive(store, activity.exclusive, batch)
    : await ingestChecked(store, activity, batch);
  return { accepted, duplicates: items.length - accepted };
}
