import {
  contextLengthBucket,
  throughputOf,
  type ActivityRow,
  type ClassificationRow,
} from "../../activity/activity-row.js";
import type { Clock } from "../../lib/clock.js";
import type { ActivityStore } from "../../stores/activity-store.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import { DomainError, invalid } from "../errors.js";
import { addUsageBatch, type UsageEntry } from "../usage/ledger.js";
import { bumpActivityVersion } from "./activity-version.js";
import { upsertAppLabels, upsertUserLabels, type UserLabel } from "./labels-repo.js";
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

/**
 * Ingests a batch of generation records for one organization (spec/activity.md), all or nothing.
 *
 * Crash safety without a distributed transaction: the record store decides which ids are new.
 * In ONE record-store transaction: claim the ids (generations_seen), add the new records to the
 * usage ledger, upsert labels, bump the activity version, and write the new records to the
 * activity store (which skips ids it already holds); then commit. A crash before the commit
 * leaves the ledger untouched and maybe rows in the activity store, which the retry skips; a
 * crash after it loses nothing. A repeated id inside the batch keeps its first record; the
 * others count as duplicates.
 */
export async function ingestGenerations(
  deps: { store: RecordStore; activity: ActivityStore; clock: Clock },
  organizationId: string,
  items: readonly unknown[],
): Promise<IngestResult> {
  const { store, activity, clock } = deps;
  const problems = new Problems();
  const parsed = parseRecords(items, clock.now().getTime(), problems);

  // References: keys and explicit workspaces must belong to the caller's organization.
  const hashes = [...new Set(parsed.map((r) => r.apiKeyHash))];
  const keys = await keysByHash(store.db, organizationId, hashes);
  const explicit = [
    ...new Set(parsed.flatMap((r) => (typeof r.workspaceId === "string" ? [r.workspaceId] : []))),
  ];
  const workspaces = explicit.length > 0 ? await workspacesOf(store.db, organizationId, explicit) : new Set();
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
  for (const r of parsed) {
    if (labelSource.has(r.id)) continue;
    labelSource.set(r.id, r);
    const row = toRow(r, organizationId, keys.get(r.apiKeyHash) as KeyRef);
    rows.push(row);
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

  const accepted = await store.transaction(async (trx) => {
    // Sorted, so that concurrent batches sharing ids lock them in the same order (no deadlock).
    const claimed = await claimGenerationIds(trx, organizationId, rows.map((r) => r.id).sort());
    if (claimed.size === 0) return 0;
    const fresh = rows.filter((r) => claimed.has(r.id));

    const usage: UsageEntry[] = fresh.map((r) => ({
      organizationId,
      keyHash: r.api_key_hash,
      // Legacy activity (no workspace) counts toward the default workspace, as analytics shows it.
      workspaceId: r.workspace_id ?? legacyWorkspace ?? (keys.get(r.api_key_hash) as KeyRef).workspaceId,
      at: new Date(r.created_at_ms),
      usageNano: r.usage_nano,
      byokNano: r.byok_usage_inference_nano,
    }));
    await addUsageBatch(trx, usage);

    const apps = new Map<number, string>();
    const users = new Map<string, UserLabel>();
    for (const r of fresh) {
      const src = labelSource.get(r.id) as ParsedRecord;
      if (r.app_id !== null && src.appTitle !== null) apps.set(r.app_id, src.appTitle);
      if (r.user_id !== null && (src.userName !== null || src.userEmail !== null)) {
        const prev = users.get(r.user_id);
        users.set(r.user_id, {
          name: src.userName ?? prev?.name ?? null,
          email: src.userEmail ?? prev?.email ?? null,
        });
      }
    }
    if (apps.size > 0) await upsertAppLabels(trx, organizationId, apps);
    if (users.size > 0) await upsertUserLabels(trx, organizationId, users);
    await bumpActivityVersion(trx, organizationId);

    await activity.insert(
      fresh,
      fresh.flatMap((r) => tagsById.get(r.id) ?? []),
    );
    return fresh.length;
  });
  return { accepted, duplicates: items.length - accepted };
}
