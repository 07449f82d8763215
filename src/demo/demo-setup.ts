import { createKey } from "../domain/keys/key-service.js";
import { findOrdinaryKeyHashByName } from "../domain/keys/key-repo.js";
import {
  findDefaultWorkspace,
  findWorkspaceBySlug,
  insertWorkspace,
} from "../domain/workspaces/workspace-repo.js";
import type { Clock } from "../lib/clock.js";
import type { RecordStore } from "../stores/record-store.js";
import { USERS, WORKSPACES, type WorkspaceSpec } from "./catalog.js";
import type { DemoKey, DemoPlan, DemoWorkspace } from "./generate-records.js";
import { Random } from "./random.js";

export interface DemoSetup {
  plan: DemoPlan;
  createdWorkspaces: number;
  createdKeys: number;
}

async function ensureWorkspace(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  spec: WorkspaceSpec,
): Promise<{ id: string; created: boolean }> {
  if (spec.slug === null) {
    const ws = await findDefaultWorkspace(store.db, organizationId);
    if (!ws) throw new Error("the organization has no default workspace (it was deleted)");
    return { id: ws.id, created: false };
  }
  const slug = spec.slug;
  return store.transaction(async (trx) => {
    const existing = await findWorkspaceBySlug(trx, organizationId, slug);
    if (existing) return { id: existing.id, created: false };
    const creator = USERS[spec.users[0] ?? 0];
    const id = await insertWorkspace(trx, {
      organizationId,
      name: spec.name,
      slug,
      isDefault: false,
      createdBy: creator?.id ?? null,
      now: clock.now(),
      columns: {
        description: spec.description,
        is_data_discount_logging_enabled: spec.dataDiscount > 0 ? 1 : 0,
      },
    });
    return { id, created: true };
  });
}

/**
 * The demo organization's workspaces and ordinary keys (WORKSPACES in catalog.ts), created through
 * the workspace repository and the key service when missing and reused when a previous demo run
 * made them (matched by workspace slug and key name), so that running the demo again adds
 * activity to the same keys.
 */
export async function ensureDemoSetup(
  store: RecordStore,
  clock: Clock,
  organizationId: string,
  seed: number,
): Promise<DemoSetup> {
  let createdWorkspaces = 0;
  let createdKeys = 0;
  const workspaces: DemoWorkspace[] = [];
  for (const spec of WORKSPACES) {
    const ws = await ensureWorkspace(store, clock, organizationId, spec);
    if (ws.created) createdWorkspaces += 1;
    const keys: DemoKey[] = [];
    for (const k of spec.keys) {
      const existing = await findOrdinaryKeyHashByName(store.db, organizationId, ws.id, k.name);
      if (existing !== undefined) {
        keys.push({ hash: existing, spec: k });
        continue;
      }
      const created = await createKey(store, clock, organizationId, {
        name: k.name,
        workspace_id: ws.id,
        creator_user_id: USERS[k.creator]?.id ?? null,
        ...(k.monthlyLimit !== undefined ? { limit: k.monthlyLimit, limit_reset: "monthly" as const } : {}),
      });
      createdKeys += 1;
      keys.push({ hash: created.data.hash, spec: k });
    }
    workspaces.push({ id: ws.id, isDefault: spec.slug === null, spec, keys });
  }
  return {
    plan: { workspaces, classifierId: new Random(seed ^ 0x0c1a55f1).uuid() },
    createdWorkspaces,
    createdKeys,
  };
}
