import type { Selectable } from "kysely";
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
