import type { SecretBox } from "../../lib/secret-box.js";
import type { RecordStore } from "../../stores/record-store.js";
import { countDestinations, listDestinationRows } from "./destination-repo.js";
import { toDestination, type Destination } from "./destination-record.js";
import { workspaceForField } from "../workspaces/resolve-workspace.js";

export interface DestinationPage {
  data: Destination[];
  total_count: number;
}

/** One page of a workspace's live destinations (default workspace when none is given). */
export async function listDestinations(
  store: RecordStore,
  box: SecretBox,
  organizationId: string,
  q: { workspace_id?: string; offset?: number | null; limit?: number },
): Promise<DestinationPage> {
  const workspaceId = await workspaceForField(store.db, store.caps, organizationId, q.workspace_id);
  // Without workspace_id and with the default workspace deleted, there is nothing to list.
  if (workspaceId === null) return { data: [], total_count: 0 };
  const [rows, total] = await Promise.all([
    listDestinationRows(store.db, workspaceId, q.offset ?? 0, q.limit ?? 50),
    countDestinations(store.db, workspaceId),
  ]);
  return { data: rows.map((r) => toDestination(box, r)), total_count: total };
}
