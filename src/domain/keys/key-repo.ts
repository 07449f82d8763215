import { flatMapChunks } from "../../lib/chunks.js";
import type { Selectable, Updateable } from "kysely";
import { QueryTemplate } from "../../stores/query-template.js";
import { toBigInt } from "../../lib/money.js";
import type { Db } from "../../stores/record-store.js";
import type { ApiKeysTable } from "../../stores/schema.js";

export type KeyRow = Selectable<ApiKeysTable>;

export interface NewKey {
  hash: string;
  label: string;
  organizationId: string;
  workspaceId: string;
  name: string;
  isManagement: boolean;
  limitNano: bigint | null;
  limitReset: string | null;
  includeByokInLimit: boolean;
  creatorUserId: string | null;
  externalUser: string | null;
  externalKeyHash: string | null;
  expiresAt: string | null;
  now: Date;
}

export async function insertKey(db: Db, k: NewKey): Promise<void> {
  const at = k.now.toISOString();
  await db
    .insertInto("api_keys")
    .values({
      hash: k.hash,
      label: k.label,
      organization_id: k.organizationId,
      workspace_id: k.workspaceId,
      name: k.name,
      is_management: k.isManagement ? 1 : 0,
      disabled: 0,
      limit_nano: k.limitNano,
      limit_reset: k.limitReset,
      include_byok_in_limit: k.includeByokInLimit ? 1 : 0,
      creator_user_id: k.creatorUserId,
      external_user: k.externalUser,
      external_key_hash: k.externalKeyHash,
      expires_at: k.expiresAt,
      created_at: at,
      updated_at: at,
      deleted_at: null,
    })
    .execute();
}

/** A live (not deleted) key of the organization; cross-organization lookups find nothing. */
export function findKey(db: Db, organizationId: string, hash: string): Promise<KeyRow | undefined> {
  return db
    .selectFrom("api_keys")
    .selectAll()
    .where("hash", "=", hash)
    .where("organization_id", "=", organizationId)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}

/**
 * A live ordinary (non-management) key of the organization. The `/keys` resource manages only
 * ordinary keys: management keys are neither listed nor addressable there.
 */
export function findOrdinaryKey(db: Db, organizationId: string, hash: string): Promise<KeyRow | undefined> {
  return db
    .selectFrom("api_keys")
    .selectAll()
    .where("hash", "=", hash)
    .where("organization_id", "=", organizationId)
    .where("is_management", "=", 0)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}

export interface KeyPage {
  organizationId: string;
  workspaceId: string;
  includeDisabled: boolean;
  offset: number;
  limit: number;
}

/** Live ordinary keys of one workspace, most recent first (ties broken by the numeric id). */
export function listOrdinaryKeys(db: Db, p: KeyPage): Promise<KeyRow[]> {
  let q = db
    .selectFrom("api_keys")
    .selectAll()
    .where("organization_id", "=", p.organizationId)
    .where("workspace_id", "=", p.workspaceId)
    .where("is_management", "=", 0)
    .where("deleted_at", "is", null);
  if (!p.includeDisabled) q = q.where("disabled", "=", 0);
  return q.orderBy("created_at", "desc").orderBy("id", "desc").limit(p.limit).offset(p.offset).execute();
}

/** The columns a PATCH may change. Absent properties are left untouched. */
export type KeyColumnsPatch = Pick<
  Updateable<ApiKeysTable>,
  "name" | "disabled" | "limit_nano" | "limit_reset" | "include_byok_in_limit" | "expires_at"
>;

/**
 * Sets exactly the given columns (and updated_at) of a live ordinary key in one UPDATE statement,
 * so concurrent updates of different fields of one key never overwrite each other.
 * Returns false when no such key exists.
 */
export async function updateOrdinaryKey(
  db: Db,
  organizationId: string,
  hash: string,
  patch: KeyColumnsPatch,
  now: Date,
): Promise<boolean> {
  const res = await db
    .updateTable("api_keys")
    .set({ ...patch, updated_at: now.toISOString() })
    .where("hash", "=", hash)
    .where("organization_id", "=", organizationId)
    .where("is_management", "=", 0)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** The columns a PATCH may set, in the order a statement's shape lists them. */
const PATCH_COLUMNS = [
  "name",
  "disabled",
  "limit_nano",
  "limit_reset",
  "include_byok_in_limit",
  "expires_at",
] as const satisfies readonly (keyof KeyColumnsPatch)[];

/**
 * updateOrdinaryKeyReturning's statement, compiled once per set of columns (the shape, e.g.
 * "name,limit_nano"): PATCH /keys/{hash} is a hot management write.
 */
const updateReturning = new QueryTemplate(
  (db: Db, shape, organizationId: string, hash: string, updatedAt: string, ...values: unknown[]) => {
    const set: Record<string, unknown> = {};
    (shape === "" ? [] : shape.split(",")).forEach((c, i) => (set[c] = values[i]));
    return db
      .updateTable("api_keys")
      .set({ ...(set as KeyColumnsPatch), updated_at: updatedAt })
      .where("hash", "=", hash)
      .where("organization_id", "=", organizationId)
      .where("is_management", "=", 0)
      .where("deleted_at", "is", null)
      .returningAll()
      .compile();
  },
);

/** updateOrdinaryKey that answers with the updated row (one statement: UPDATE … RETURNING). */
export async function updateOrdinaryKeyReturning(
  db: Db,
  organizationId: string,
  hash: string,
  patch: KeyColumnsPatch,
  now: Date,
): Promise<KeyRow | undefined> {
  const cols = PATCH_COLUMNS.filter((c) => patch[c] !== undefined);
  const { rows } = await updateReturning.execute(
    db,
    cols.join(","),
    organizationId,
    hash,
    now.toISOString(),
    ...cols.map((c) => patch[c]),
  );
  return rows[0];
}

/**
 * Soft delete: the row stays (analytics keeps resolving the key's name) but the key no longer
 * authenticates or appears anywhere. Returns false when no such live key exists.
 */
export async function softDeleteOrdinaryKey(
  db: Db,
  organizationId: string,
  hash: string,
  now: Date,
): Promise<boolean> {
  const at = now.toISOString();
  const res = await db
    .updateTable("api_keys")
    .set({ deleted_at: at, updated_at: at })
    .where("hash", "=", hash)
    .where("organization_id", "=", organizationId)
    .where("is_management", "=", 0)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** Keys per lookup statement (bound values stay far under each engine's limit). */
const LOOKUP_CHUNK = 1_000;

/**
 * The organization's keys among the given hashes, deleted keys included (late activity still
 * counts): id, workspace and creator of each.
 */
export function keysByHashes(
  db: Db,
  organizationId: string,
  hashes: readonly string[],
): Promise<Pick<KeyRow, "id" | "hash" | "workspace_id" | "creator_user_id">[]> {
  return flatMapChunks(hashes, LOOKUP_CHUNK, (chunk) =>
    db
      .selectFrom("api_keys")
      .select(["id", "hash", "workspace_id", "creator_user_id"])
      .where("organization_id", "=", organizationId)
      .where("hash", "in", chunk)
      .execute(),
  );
}

/** The key with this hash in any state (deleted too), with the columns the request path needs. */
export function findKeyByHash(db: Db, hash: string) {
  return db
    .selectFrom("api_keys")
    .select([
      "id",
      "hash",
      "label",
      "creator_user_id",
      "organization_id",
      "workspace_id",
      "is_management",
      "disabled",
      "expires_at",
      "deleted_at",
      "limit_nano",
      "limit_reset",
      "include_byok_in_limit",
    ])
    .where("hash", "=", hash)
    .executeTakeFirst();
}

/** The oldest live ordinary key of a workspace with this name, if any (the demo reuses it). */
export async function findOrdinaryKeyHashByName(
  db: Db,
  organizationId: string,
  workspaceId: string,
  name: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("api_keys")
    .select("hash")
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId)
    .where("name", "=", name)
    .where("is_management", "=", 0)
    .where("deleted_at", "is", null)
    .orderBy("created_at")
    .executeTakeFirst();
  return row?.hash;
}

/** The user who created the key with this hash (any state); null when none or unknown. */
export async function keyCreatorUserId(db: Db, hash: string): Promise<string | null> {
  const row = await db
    .selectFrom("api_keys")
    .select("creator_user_id")
    .where("hash", "=", hash)
    .executeTakeFirst();
  return row?.creator_user_id ?? null;
}

/** Live keys of a workspace that are not disabled (management keys included). */
export async function countActiveKeysOfWorkspace(db: Db, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom("api_keys")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("workspace_id", "=", workspaceId)
    .where("deleted_at", "is", null)
    .where("disabled", "=", 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Soft-deletes (and disables) every live key of a workspace. */
export async function softDeleteKeysOfWorkspace(db: Db, workspaceId: string, now: Date): Promise<void> {
  const at = now.toISOString();
  await db
    .updateTable("api_keys")
    .set({ deleted_at: at, updated_at: at, disabled: 1 })
    .where("workspace_id", "=", workspaceId)
    .where("deleted_at", "is", null)
    .execute();
}

/**
 * Which of the hashes are keys of the organization, in one statement (callers bound the list).
 * `liveOnly` leaves deleted keys out.
 */
export async function keyHashesIn(
  db: Db,
  organizationId: string,
  hashes: readonly string[],
  liveOnly: boolean,
): Promise<Set<string>> {
  let q = db.selectFrom("api_keys").select("hash").where("organization_id", "=", organizationId);
  if (liveOnly) q = q.where("deleted_at", "is", null);
  const rows = await q.where("hash", "in", hashes).execute();
  return new Set(rows.map((r) => r.hash));
}

/** Whether a key with this hash exists in any state. */
export async function keyHashExists(db: Db, hash: string): Promise<boolean> {
  return (
    (await db.selectFrom("api_keys").select("hash").where("hash", "=", hash).executeTakeFirst()) !== undefined
  );
}

/** Makes the key with this hash a live, enabled, non-expiring management key (the operator's key). */
export async function reviveManagementKey(db: Db, hash: string): Promise<void> {
  await db
    .updateTable("api_keys")
    .set({ deleted_at: null, disabled: 0, is_management: 1, expires_at: null })
    .where("hash", "=", hash)
    .execute();
}

/** Every key of the organization (deleted too): hash, name and workspace. */
export function keysOfOrganization(db: Db, organizationId: string) {
  return db
    .selectFrom("api_keys")
    .select(["hash", "name", "workspace_id"])
    .where("organization_id", "=", organizationId)
    .execute();
}

/** Id of each of the organization's keys among the hashes, in one statement (callers bound the list). */
export function keyIdsByHashes(db: Db, organizationId: string, hashes: readonly string[]) {
  return db
    .selectFrom("api_keys")
    .select(["id", "hash"])
    .where("organization_id", "=", organizationId)
    .where("hash", "in", hashes)
    .execute();
}

/** Id and name of each of the organization's keys among the ids, in one statement (callers bound the list). */
export function keyNamesByIds(db: Db, organizationId: string, ids: readonly number[]) {
  return db
    .selectFrom("api_keys")
    .select(["id", "name"])
    .where("organization_id", "=", organizationId)
    .where("id", "in", ids)
    .execute();
}

/** Hash and name of each of the organization's keys among the hashes, in one statement. */
export function keyNamesByHashes(db: Db, organizationId: string, hashes: readonly string[]) {
  return db
    .selectFrom("api_keys")
    .select(["hash", "name"])
    .where("organization_id", "=", organizationId)
    .where("hash", "in", hashes)
    .execute();
}

/**
 * The limits (nano-USD) of the organization's live ordinary keys whose limit never resets, one per
 * key: what `GET /credits` adds up when no credit line is set (docs/api-notes.md "Credits").
 */
export async function lifetimeLimitsOfOrganization(db: Db, organizationId: string): Promise<bigint[]> {
  const rows = await db
    .selectFrom("api_keys")
    .select("limit_nano")
    .where("organization_id", "=", organizationId)
    .where("deleted_at", "is", null)
    .where("is_management", "=", 0)
    .where("limit_nano", "is not", null)
    .where("limit_reset", "is", null)
    .execute();
  return rows.map((r) => toBigInt(r.limit_nano));
}

/**
 * The organization's live keys among the hashes (management keys too, marked), optionally with a
 * shared row lock until the transaction ends, so that a concurrent delete waits (guardrail
 * assignments: docs/guardrails.md "Assignments").
 */
export function liveKeysByHashes(
  db: Db,
  organizationId: string,
  hashes: readonly string[],
  lock: "none" | "share",
): Promise<Pick<KeyRow, "hash" | "is_management">[]> {
  return flatMapChunks(hashes, LOOKUP_CHUNK, (chunk) => {
    const q = db
      .selectFrom("api_keys")
      .select(["hash", "is_management"])
      .where("organization_id", "=", organizationId)
      .where("deleted_at", "is", null)
      .where("hash", "in", chunk);
    return (lock === "share" ? q.forShare() : q).execute();
  });
}

/** Hash, name and label of each of the organization's keys among the hashes (any state). */
export function keyNamesAndLabelsByHashes(db: Db, organizationId: string, hashes: readonly string[]) {
  return flatMapChunks(hashes, LOOKUP_CHUNK, (chunk) =>
    db
      .selectFrom("api_keys")
      .select(["hash", "name", "label"])
      .where("organization_id", "=", organizationId)
      .where("hash", "in", chunk)
      .execute(),
  );
}

/** Hashes of a workspace's live keys (management keys included). */
export async function liveKeyHashesOfWorkspace(db: Db, workspaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("api_keys")
    .select("hash")
    .where("workspace_id", "=", workspaceId)
    .where("deleted_at", "is", null)
    .execute();
  return rows.map((r) => r.hash);
}

/**
 * Current-window totals (each window kind) of every key a member created, summed: what a member
 * guardrail's budget counts (docs/guardrails.md "Budgets"). Deleted keys' spend counts too.
 * Summed here, not by the store (a sum of counters may pass 64 bits, which SQLite refuses).
 */
export async function creatorUsageRows(
  db: Db,
  organizationId: string,
  userId: string,
  indexes: Readonly<Record<"day" | "week" | "month" | "all", number>>,
): Promise<{ window: string; usage_nano: unknown; byok_nano: unknown }[]> {
  // The member's keys first (api_keys_creator), then each key's current windows by primary key.
  const keys = db
    .selectFrom("api_keys")
    .select("hash")
    .where("creator_user_id", "=", userId)
    .where("organization_id", "=", organizationId);
  return db
    .selectFrom("usage_counters")
    .select(["window", "usage_nano", "byok_nano"])
    .where((eb) =>
      eb.or(
        (["day", "week", "month", "all"] as const).map((w) =>
          eb.and([
            eb("scope", "=", "key"),
            eb("scope_id", "in", keys),
            eb("window", "=", w),
            eb("window_index", "=", indexes[w]),
          ]),
        ),
      ),
    )
    .execute();
}

/**
 * How many active keys each of the users created (`creator_user_id`), in one workspace or, with
 * `workspaceId` null, in the whole organization; users with none are absent. Active means not
 * deleted and not expired at `now`; disabled keys count (enabling one brings it back). Callers
 * bound the list.
 */
export async function activeKeyCountsByCreator(
  db: Db,
  organizationId: string,
  userIds: readonly string[],
  workspaceId: string | null,
  now: Date,
): Promise<Map<string, number>> {
  if (userIds.length === 0) return new Map();
  const at = now.toISOString();
  let q = db
    .selectFrom("api_keys")
    .select(["creator_user_id", (eb) => eb.fn.countAll().as("n")])
    .where("organization_id", "=", organizationId)
    .where("creator_user_id", "in", userIds)
    .where("deleted_at", "is", null)
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", at)]));
  if (workspaceId !== null) q = q.where("workspace_id", "=", workspaceId);
  const rows = await q.groupBy("creator_user_id").execute();
  return new Map(rows.map((r) => [r.creator_user_id as string, Number(r.n)]));
}
