import { call } from "./client.ts";
import type { Workspace } from "./types.ts";

/** Every workspace of the organization, in the API's order (GET /workspaces answers 100 a page). */
export async function allWorkspaces(): Promise<Workspace[]> {
  const all: Workspace[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await call("get", "/workspaces", { query: { limit: 100, offset } });
    all.push(...page.data);
    if (page.data.length < 100 || all.length >= page.total_count) return all;
  }
}
