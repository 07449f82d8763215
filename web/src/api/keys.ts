import { call } from "./client.ts";
import type { Key } from "./types.ts";

/** Every key of a workspace, disabled ones included (GET /keys lists one workspace, 100 a page). */
export async function workspaceKeys(workspaceId: string): Promise<Key[]> {
  const all: Key[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await call("get", "/keys", {
      query: { include_disabled: true, workspace_id: workspaceId, offset },
    });
    all.push(...page.data);
    if (page.data.length < 100 || offset >= 100_000) return all;
  }
}

/** The keys of several workspaces, newest first. */
export async function keysOf(workspaceIds: readonly string[]): Promise<Key[]> {
  const pages = await Promise.all(workspaceIds.map(workspaceKeys));
  return pages.flat().sort((x, y) => y.created_at.localeCompare(x.created_at));
}
