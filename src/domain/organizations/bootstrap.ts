import { hashKey } from "../../lib/ids.js";
import { keyHashExists, reviveManagementKey } from "../keys/key-repo.js";
import type { Clock } from "../../lib/clock.js";
import type { RecordStore } from "../../stores/record-store.js";
import { findHomeWorkspace } from "../workspaces/workspace-repo.js";
import { addManagementKey, createOrganization } from "./create-organization.js";
import { firstOrganization } from "./organization-repo.js";

export interface BootstrapResult {
  /** Set when a new key was generated and must be shown to the operator, once. */
  generatedKey: string | null;
  organizationId: string;
}

/**
 * First start on an empty store: the default organization, its default workspace and one
 * management key. With `bootstrapKey`, a management key with exactly that value exists afterwards
 * (in the first organization); running again with it changes nothing.
 */
export async function bootstrap(
  store: RecordStore,
  clock: Clock,
  bootstrapKey: string | null,
): Promise<BootstrapResult> {
  // Instances starting together on an empty shared store would each see no organization and
  // create one (and print a key each): the store-wide lock makes the check and the create one step.
  return store.exclusive("gatehouse:bootstrap", async () => {
    try {
      return await bootstrapOnce(store, clock, bootstrapKey);
    } catch (err) {
      // An instance of an older version may still race without the lock: the loser hits the
      // unique hash and, on a second look, finds the winner's organization and key.
      if (bootstrapKey) return bootstrapOnce(store, clock, bootstrapKey);
      throw err;
    }
  });
}

async function bootstrapOnce(
  store: RecordStore,
  clock: Clock,
  bootstrapKey: string | null,
): Promise<BootstrapResult> {
  const first = await firstOrganization(store.db);
  if (!first) {
    const created = await createOrganization(store, clock, "Default organization", bootstrapKey ?? undefined);
    return {
      generatedKey: bootstrapKey ? null : created.managementKey,
      organizationId: created.organizationId,
    };
  }
  if (bootstrapKey) {
    const hash = hashKey(bootstrapKey);
    if (await keyHashExists(store.db, hash)) {
      // The operator's key must work after start: revive it if it was deleted, disabled or expired.
      await reviveManagementKey(store.db, hash);
    } else {
      await store.transaction(async (trx) => {
        const ws = await findHomeWorkspace(trx, first.id);
        if (!ws) throw new Error(`organization ${first.id} has no live workspace to hold the bootstrap key`);
        await addManagementKey(trx, {
          organizationId: first.id,
          workspaceId: ws.id,
          key: bootstrapKey,
          name: "Bootstrap management key",
          now: clock.now(),
        });
      });
    }
  }
  return { generatedKey: null, organizationId: first.id };
}
