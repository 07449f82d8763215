import { hashKey, keyLabel, newId, newKeyString } from "../../lib/ids.js";
import type { Clock } from "../../lib/clock.js";
import type { RecordStore } from "../../stores/record-store.js";
import { insertKey } from "../keys/key-repo.js";
import { insertWorkspace } from "../workspaces/workspace-repo.js";
import { insertOrganization } from "./organization-repo.js";

export interface CreatedOrganization {
  organizationId: string;
  workspaceId: string;
  /** The management key in plain text: shown once, never stored. */
  managementKey: string;
}

/**
 * Creates an organization with its default workspace and first management key, in one
 * transaction. `key` lets the caller choose the key string (GATEHOUSE_BOOTSTRAP_KEY).
 */
export async function createOrganization(
  store: RecordStore,
  clock: Clock,
  name: string,
  key: string = newKeyString(),
): Promise<CreatedOrganization> {
  const now = clock.now();
  const organizationId = newId();
  return store.transaction(async (trx) => {
    await insertOrganization(trx, { id: organizationId, name, now });
    const workspaceId = await insertWorkspace(trx, {
      organizationId,
      name: "Default",
      slug: "default",
      isDefault: true,
      createdBy: null,
      now,
    });
    await addManagementKey(trx, { organizationId, workspaceId, key, name: "Management key", now });
    return { organizationId, workspaceId, managementKey: key };
  });
}

export async function addManagementKey(
  db: Parameters<typeof insertKey>[0],
  k: { organizationId: string; workspaceId: string; key: string; name: string; now: Date },
): Promise<void> {
  await insertKey(db, {
    hash: hashKey(k.key),
    label: keyLabel(k.key),
    organizationId: k.organizationId,
    workspaceId: k.workspaceId,
    name: k.name,
    isManagement: true,
    limitNano: null,
    limitReset: null,
    includeByokInLimit: false,
    creatorUserId: null,
    externalUser: null,
    externalKeyHash: null,
    expiresAt: null,
    now: k.now,
  });
}
