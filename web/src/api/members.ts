import { call, type Answer } from "./client.ts";
import { everyPage, PAGE } from "./paging.ts";

/** Organization members and workspace memberships (docs/members.md). */
export type Member = Answer<"/organization/members", "get">["data"][number];
export type WorkspaceMember = Answer<"/workspaces/{id}/members", "get">["data"][number];

/** Every member of the organization, oldest first. */
export const allMembers = (): Promise<Member[]> =>
  everyPage((offset) => call("get", "/organization/members", { query: { limit: PAGE, offset } }));

/** Every membership of a workspace (the default workspace lists every member). */
export const workspaceMembers = (workspaceId: string): Promise<WorkspaceMember[]> =>
  everyPage((offset) =>
    call("get", "/workspaces/{id}/members", { path: { id: workspaceId }, query: { limit: PAGE, offset } }),
  );

/** A member as people read it: "Ada Lovelace <ada@example.com>", or the email alone. */
export function memberName(m: Pick<Member, "email" | "first_name" | "last_name">): string {
  const name = [m.first_name, m.last_name].filter(Boolean).join(" ");
  return name ? `${name} <${m.email}>` : m.email;
}
