import type { Selectable } from "kysely";
import { newId } from "../../lib/ids.js";
import type { Db } from "../../stores/record-store.js";
import type { WorkspacesTable } from "../../stores/schema.js";

export type WorkspaceRow = Selectable<WorkspacesTable>;

export interface NewWorkspace {
  organizationId: string;
  name: string;
  slug: string;
  isDefault: boolean;
  createdBy: string | null;
  now: Date;
}

/** Inserts a workspace with every setting at its default; returns its id. */
export async function insertWorkspace(db: Db, w: NewWorkspace): Promise<string> {
  const id = newId();
  const at = w.now.toISOString();
  await db
    .insertInto("workspaces")
    .values({
      id,
      organization_id: w.organizationId,
      name: w.name,
      slug: w.slug,
      description: null,
      is_default: w.isDefault ? 1 : 0,
      default_text_model: null,
      default_image_model: null,
      default_provider_sort: null,
      disabled_server_tools: null,
      io_logging_api_key_ids: null,
      io_logging_sampling_rate: 1,
      is_data_discount_logging_enabled: 0,
      is_observability_broadcast_enabled: 0,
      is_observability_io_logging_enabled: 0,
      include_byok_in_budgets: 0,
      created_by: w.createdBy,
      created_at: at,
      updated_at: at,
      deleted_at: null,
    })
    .execute();
  return id;
}

/** The organization's default workspace (live), or undefined when it has been deleted. */
export function findDefaultWorkspace(db: Db, organizationId: string): Promise<WorkspaceRow | undefined> {
  return db
    .selectFrom("workspaces")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("is_default", "=", 1)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}
