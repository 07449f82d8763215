import { createHash } from "node:crypto";
import type { Clock } from "../../lib/clock.js";
import { HASH_RE, hashKey, keyLabel, newKeyString } from "../../lib/ids.js";
import { usdToNano } from "../../lib/money.js";
import { parseTimestamp, UTC_SECONDS_RE } from "../../lib/time.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import { invalid, notFound } from "../errors.js";
import { deleteKeyAssignments } from "../guardrails/key-assignment-repo.js";
import { checkKeyCreator } from "../members/key-creator.js";
import type { ResetPeriod } from "../usage/windows.js";
import { requireWorkspaceForField, workspaceForField } from "../workspaces/resolve-workspace.js";
import {
  findOrdinaryKey,
  insertKey,
  listOrdinaryKeys,
  softDeleteOrdinaryKey,
  updateOrdinaryKeyReturning,
  type KeyColumnsPatch,
} from "./key-repo.js";
import { keyTotals, toKeyRecord, toKeyRecords, type KeyRecord } from "./key-record.js";

/** The page size of GET /keys (there is no `limit` parameter). */
export const KEY_PAGE_SIZE = 100;

export interface CreateKeyInput {
  name: string;
  limit?: number | null;
  limit_reset?: ResetPeriod | null;
  include_byok_in_limit?: boolean;
  expires_at?: string | null;
  creator_user_id?: string | null;
  workspace_id?: string;
  external?: { user: string; api_key?: string };
}

export interface UpdateKeyInput {
  name?: string;
  disabled?: boolean;
  limit?: number | null;
  limit_reset?: ResetPeriod | null;
  include_byok_in_limit?: boolean;
  /** A Gatehouse extension: extend, shorten or (null) clear the expiry; checked like on create. */
  expires_at?: string | null;
}

export interface ListKeysInput {
  include_disabled?: boolean;
  offset?: number | null;
  workspace_id?: string;
}

/** Rules a JSON schema cannot express; each failure names its field. */
function checkName(name: string): string {
  if (name.trim() === "") throw invalid("name: must not be blank");
  return name;
}

function checkExpiry(value: string | null | undefined, now: Date): string | null {
  if (value === undefined || value === null) return null;
  const at = UTC_SECONDS_RE.test(value) ? parseTimestamp(value) : null;
  if (!at) {
    throw invalid("expires_at: must be a UTC timestamp with seconds, like 2026-12-31T23:59:59Z");
  }
  if (at.getTime() <= now.getTime()) throw invalid("expires_at: must be in the future");
  // Stored in the one canonical form so that text comparison with "now" is exact.
  return at.toISOString();
}

/** A partner key must look like a credential, not a password: long and not repetitive. */
function externalKeyHash(apiKey: string | undefined): string | null {
  if (apiKey === undefined) return null;
  if (new Set(apiKey).size < 8)
    throw invalid("external.api_key: is not random enough (too few distinct characters)");
  return createHash("sha256").update(apiKey, "utf8").digest("hex");
}

/** Path hashes are matched case-insensitively; anything that is not 64 hex digits names no key. */
function normaliseHash(hash: string): string {
  const h = hash.toLowerCase();
  if (!HASH_RE.test(h)) throw notFound("API key");
  return h;
}

/** Creates an ordinary key. The plain key string is returned once and never stored. */
export async function createKey(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  input: CreateKeyInput,
): Promise<{ data: KeyRecord; key: string }> {
  const now = clock.now();
  const name = checkName(input.name);
  const expiresAt = checkExpiry(input.expires_at, now);
  const extHash = externalKeyHash(input.external?.api_key);
  const key = newKeyString();
  const hash = hashKey(key);
  await store.transaction(async (trx) => {
    // A shared lock: a concurrent workspace deletion, which counts the workspace's keys, cannot
    // miss a key being created.
    const workspaceId = await requireWorkspaceForField(
      trx,
      store.caps,
      organizationId,
      input.workspace_id,
      "share",
    );
    if (input.creator_user_id) await checkKeyCreator(trx, store.caps, organizationId, input.creator_user_id);
    await insertKey(trx, {
      hash,
      label: keyLabel(key),
      organizationId,
      workspaceId,
      name,
      isManagement: false,
      limitNano: input.limit === undefined || input.limit === null ? null : usdToNano(input.limit),
      limitReset: input.limit_reset ?? null,
      includeByokInLimit: input.include_byok_in_limit ?? false,
      creatorUserId: input.creator_user_id ?? null,
      externalUser: input.external?.user ?? null,
      externalKeyHash: extHash,
      expiresAt,
      now,
    });
  });
  return { data: await getKey(store.db, clock, organizationId, hash), key };
}

/** One page (100 keys, most recent first) of a workspace's keys. */
export async function listKeys(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  input: ListKeysInput,
): Promise<KeyRecord[]> {
  const db = store.db;
  const workspaceId = await workspaceForField(db, store.caps, organizationId, input.workspace_id);
  if (workspaceId === null) return [];
  const rows = await listOrdinaryKeys(db, {
    organizationId,
    workspaceId,
    includeDisabled: input.include_disabled ?? false,
    offset: input.offset ?? 0,
    limit: KEY_PAGE_SIZE,
  });
  return toKeyRecords(db, rows, clock.now());
}

export async function getKey(db: Db, clock: Clock, organizationId: string, hash: string): Promise<KeyRecord> {
  const row = await findOrdinaryKey(db, organizationId, normaliseHash(hash));
  if (!row) throw notFound("API key");
  return toKeyRecord(row, await keyTotals(db, row.hash, clock.now()));
}

/** Applies exactly the given fields; `{}` only touches updated_at. */
export async function updateKey(
  db: Db,
  clock: Clock,
  organizationId: string,
  hash: string,
  input: UpdateKeyInput,
): Promise<KeyRecord> {
  const h = normaliseHash(hash);
  const patch: KeyColumnsPatch = {};
  if (input.name !== undefined) patch.name = checkName(input.name);
  if (input.disabled !== undefined) patch.disabled = input.disabled ? 1 : 0;
  if (input.limit !== undefined) patch.limit_nano = input.limit === null ? null : usdToNano(input.limit);
  if (input.limit_reset !== undefined) patch.limit_reset = input.limit_reset;
  if (input.include_byok_in_limit !== undefined) {
    patch.include_byok_in_limit = input.include_byok_in_limit ? 1 : 0;
  }
  const now = clock.now();
  if (input.expires_at !== undefined) patch.expires_at = checkExpiry(input.expires_at, now);
  const row = await updateOrdinaryKeyReturning(db, organizationId, h, patch, now);
  if (!row) throw notFound("API key");
  return toKeyRecord(row, await keyTotals(db, row.hash, now));
}

/** Soft-deletes a key and, in the same transaction, removes its guardrail assignment. */
export async function deleteKey(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  hash: string,
): Promise<void> {
  const h = normaliseHash(hash);
  await store.transaction(async (trx) => {
    if (!(await softDeleteOrdinaryKey(trx, organizationId, h, clock.now()))) throw notFound("API key");
    await deleteKeyAssignments(trx, [h]);
  });
}
