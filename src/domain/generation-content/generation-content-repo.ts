import type { Db } from "../../stores/record-store.js";

/** One generation's logged content as the table holds it: sealed, with who made it and when. */
export interface SealedGenerationContent {
  organizationId: string;
  id: string;
  workspaceId: string;
  keyHash: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** SecretBox output (lib/secret-box.ts); the caller seals and opens it. */
  ciphertext: string;
}

/**
 * Stores one generation's sealed content. Idempotent: an (organization, id) already stored is
 * left as it is (a recording retried after a failure announces the generation again).
 */
export async function insertGenerationContent(db: Db, row: SealedGenerationContent): Promise<void> {
  await db
    .insertInto("generation_content")
    .values({
      organization_id: row.organizationId,
      id: row.id,
      workspace_id: row.workspaceId,
      key_hash: row.keyHash,
      created_at: row.createdAt,
      content_ciphertext: row.ciphertext,
    })
    .onConflict((oc) => oc.columns(["organization_id", "id"]).doNothing())
    .execute();
}

/** One generation's sealed content in its organization, if stored at or after `notBefore` (ISO). */
export async function findGenerationContent(
  db: Db,
  organizationId: string,
  id: string,
  notBefore: string,
): Promise<SealedGenerationContent | undefined> {
  const row = await db
    .selectFrom("generation_content")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .where("created_at", ">=", notBefore)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    organizationId: row.organization_id,
    id: row.id,
    workspaceId: row.workspace_id,
    keyHash: row.key_hash,
    createdAt: row.created_at,
    ciphertext: row.content_ciphertext,
  };
}

/** Deletes the content of generations created before `cutoff` (ISO); returns how many rows went. */
export async function deleteGenerationContentBefore(db: Db, cutoff: string): Promise<number> {
  const res = await db.deleteFrom("generation_content").where("created_at", "<", cutoff).executeTakeFirst();
  return Number(res.numDeletedRows);
}
