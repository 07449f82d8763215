import type { Clock } from "../../lib/clock.js";
import { HASH_RE } from "../../lib/ids.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import { invalid, notFound } from "../errors.js";
import { keyCreatorUserId, keyNamesAndLabelsByHashes, liveKeysByHashes } from "../keys/key-repo.js";
import { membersByIds } from "../members/member-repo.js";
import {
  toKeyAssignment,
  toMemberAssignment,
  type KeyAssignmentRecord,
  type MemberAssignmentRecord,
} from "./assignment-record.js";
import { workspaceOfDefaultGuardrail } from "./default-guardrail.js";
import { findGuardrailRow } from "./guardrail-repo.js";
import { guardrailIdOf } from "./guardrail-service.js";
import { assignKeyRows, listKeyAssignmentRows, unassignKeyRows } from "./key-assignment-repo.js";
import { assignMemberRows, listMemberAssignmentRows, unassignMemberRows } from "./member-assignment-repo.js";

/**
 * Guardrail assignments of keys and members (docs/guardrails.md "Assignments"): a key or member
 * holds at most one guardrail, and assigning moves it. A workspace's default guardrail governs its
 * workspace without assignments and cannot be assigned.
 */
export interface AssignmentDeps {
  store: RecordStore;
  clock: Clock;
}

export interface Page {
  offset?: number | null;
  limit?: number;
}

export const DEFAULT_NOT_ASSIGNABLE =
  "id: a workspace's default guardrail governs every request of its workspace; it is not assigned to keys or members";

/**
 * The guardrail's id when it is stored; a default guardrail is 400, anything else 404. With
 * `lock`, the row is held shared until the transaction ends (a concurrent delete waits for it).
 */
async function assignableGuardrail(
  db: Db,
  store: RecordStore,
  organizationId: string,
  id: string,
  lock: boolean,
): Promise<string> {
  const gid = guardrailIdOf(id);
  const row = await findGuardrailRow(
    db,
    organizationId,
    gid,
    lock && store.caps.supportsForUpdate ? "share" : "none",
  );
  if (row && Number(row.is_default) !== 1) return gid;
  if (row || (await workspaceOfDefaultGuardrail(db, organizationId, gid)))
    throw invalid(DEFAULT_NOT_ASSIGNABLE);
  throw notFound("Guardrail");
}

/** The guardrail exists (stored, or a workspace's default before its first write); 404 otherwise. */
async function existingGuardrail(db: Db, organizationId: string, id: string): Promise<string> {
  const gid = guardrailIdOf(id);
  if (await findGuardrailRow(db, organizationId, gid)) return gid;
  if (await workspaceOfDefaultGuardrail(db, organizationId, gid)) return gid;
  throw notFound("Guardrail");
}

/** Each hash lower-cased, with the index it first appears at; a malformed one is 400. */
function keyHashes(hashes: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  hashes.forEach((h, i) => {
    const hash = h.toLowerCase();
    if (!HASH_RE.test(hash))
      throw invalid(`key_hashes[${i}]: must be 64 hexadecimal characters (a key's hash)`);
    if (!out.has(hash)) out.set(hash, i);
  });
  return out;
}

const unique = (ids: readonly string[]) => [...new Set(ids)];

export async function assignKeys(
  d: AssignmentDeps,
  organizationId: string,
  id: string,
  hashes: readonly string[],
  actorKeyHash: string,
): Promise<{ assigned_count: number }> {
  const wanted = keyHashes(hashes);
  const now = d.clock.now().toISOString();
  return d.store.transaction(async (trx) => {
    const gid = await assignableGuardrail(trx, d.store, organizationId, id, true);
    const lock = d.store.caps.supportsForUpdate ? "share" : "none";
    const keys = new Map(
      (await liveKeysByHashes(trx, organizationId, [...wanted.keys()], lock)).map((k) => [k.hash, k]),
    );
    for (const [hash, i] of wanted) {
      const key = keys.get(hash);
      if (!key) throw invalid(`key_hashes[${i}]: no API key with this hash in the organization`);
      if (Number(key.is_management) === 1) {
        throw invalid(
          `key_hashes[${i}]: is a management key, which makes no model requests; assign ordinary keys`,
        );
      }
    }
    const assigned = await assignKeyRows(trx, {
      organizationId,
      guardrailId: gid,
      hashes: [...wanted.keys()],
      assignedBy: await keyCreatorUserId(trx, actorKeyHash),
      now,
    });
    return { assigned_count: assigned };
  });
}

/** Removes the keys' assignments to this guardrail; hashes it does not hold are not counted. */
export async function unassignKeys(
  d: AssignmentDeps,
  organizationId: string,
  id: string,
  hashes: readonly string[],
): Promise<{ unassigned_count: number }> {
  const wanted = [...keyHashes(hashes).keys()];
  return d.store.transaction(async (trx) => {
    const gid = await existingGuardrail(trx, organizationId, id);
    return { unassigned_count: await unassignKeyRows(trx, gid, wanted) };
  });
}

export async function assignMembers(
  d: AssignmentDeps,
  organizationId: string,
  id: string,
  userIds: readonly string[],
  actorKeyHash: string,
): Promise<{ assigned_count: number }> {
  const wanted = unique(userIds);
  const now = d.clock.now().toISOString();
  return d.store.transaction(async (trx) => {
    const gid = await assignableGuardrail(trx, d.store, organizationId, id, true);
    const lock = d.store.caps.supportsForUpdate ? "share" : "none";
    const members = new Set((await membersByIds(trx, organizationId, wanted, lock)).map((m) => m.id));
    const missing = userIds.findIndex((u) => !members.has(u));
    if (missing >= 0)
      throw invalid(`member_user_ids[${missing}]: no member with this id in the organization`);
    const assigned = await assignMemberRows(trx, {
      organizationId,
      guardrailId: gid,
      userIds: wanted,
      assignedBy: await keyCreatorUserId(trx, actorKeyHash),
      now,
    });
    return { assigned_count: assigned };
  });
}

/** Removes the members' assignments to this guardrail; ids it does not hold are not counted. */
export async function unassignMembers(
  d: AssignmentDeps,
  organizationId: string,
  id: string,
  userIds: readonly string[],
): Promise<{ unassigned_count: number }> {
  return d.store.transaction(async (trx) => {
    const gid = await existingGuardrail(trx, organizationId, id);
    return { unassigned_count: await unassignMemberRows(trx, organizationId, gid, unique(userIds)) };
  });
}

/** A page of key assignments: of one guardrail (404 when there is none), or of all (`id` null). */
export async function listKeyAssignments(
  d: AssignmentDeps,
  organizationId: string,
  id: string | null,
  q: Page,
): Promise<{ data: KeyAssignmentRecord[]; total_count: number }> {
  const db = d.store.db;
  const guardrailId = id === null ? null : await existingGuardrail(db, organizationId, id);
  const { rows, total } = await listKeyAssignmentRows(db, {
    organizationId,
    guardrailId,
    offset: q.offset ?? 0,
    limit: q.limit ?? 50,
  });
  const keys = new Map(
    (
      await keyNamesAndLabelsByHashes(
        db,
        organizationId,
        rows.map((r) => r.key_hash),
      )
    ).map((k) => [k.hash, k]),
  );
  return { data: rows.map((r) => toKeyAssignment(r, keys.get(r.key_hash))), total_count: total };
}

/** A page of member assignments: of one guardrail (404 when there is none), or of all (`id` null). */
export async function listMemberAssignments(
  d: AssignmentDeps,
  organizationId: string,
  id: string | null,
  q: Page,
): Promise<{ data: MemberAssignmentRecord[]; total_count: number }> {
  const db = d.store.db;
  const guardrailId = id === null ? null : await existingGuardrail(db, organizationId, id);
  const { rows, total } = await listMemberAssignmentRows(db, {
    organizationId,
    guardrailId,
    offset: q.offset ?? 0,
    limit: q.limit ?? 50,
  });
  return { data: rows.map(toMemberAssignment), total_count: total };
}
