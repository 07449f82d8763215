import { call, type Answer, type Body } from "./client.ts";
import { everyPage, PAGE } from "./paging.ts";
import type { Key, Workspace } from "./types.ts";

/**
 * The organization's guardrails and their assignments, read whole (every list page by page, 100 at
 * a time): the Guardrails page, and the Keys and Workspaces pages that show which guardrails govern
 * a key or a workspace, read them once per page load (docs/guardrails.md).
 */
export type Guardrail = Answer<"/guardrails", "get">["data"][number];
export type GuardrailBody = Body<"/guardrails", "post">;
export type KeyAssignment = Answer<"/guardrails/assignments/keys", "get">["data"][number];
export type MemberAssignment = Answer<"/guardrails/assignments/members", "get">["data"][number];

/** Every stored guardrail of the organization, all workspaces (a default one only once stored). */
export const allGuardrails = (): Promise<Guardrail[]> =>
  everyPage((offset) => call("get", "/guardrails", { query: { limit: PAGE, offset } }));

export const allKeyAssignments = (): Promise<KeyAssignment[]> =>
  everyPage((offset) => call("get", "/guardrails/assignments/keys", { query: { limit: PAGE, offset } }));

export const allMemberAssignments = (): Promise<MemberAssignment[]> =>
  everyPage((offset) => call("get", "/guardrails/assignments/members", { query: { limit: PAGE, offset } }));

/** Guardrails by id, and which guardrail each key (by hash) and member (by id) holds. */
export interface GuardrailIndex {
  byId: Map<string, Guardrail>;
  byKey: Map<string, string>;
  byMember: Map<string, string>;
}

export const NO_GUARDRAILS: GuardrailIndex = { byId: new Map(), byKey: new Map(), byMember: new Map() };

export function indexGuardrails(
  guardrails: readonly Guardrail[],
  keys: readonly KeyAssignment[],
  members: readonly MemberAssignment[],
): GuardrailIndex {
  return {
    byId: new Map(guardrails.map((g) => [g.id, g])),
    byKey: new Map(keys.map((a) => [a.key_hash.toLowerCase(), a.guardrail_id])),
    byMember: new Map(members.map((a) => [a.user_id, a.guardrail_id])),
  };
}

/** The three reads behind every "governed by" shown on the Keys and Workspaces pages. */
export async function loadGuardrailIndex(): Promise<GuardrailIndex> {
  const [g, k, m] = await Promise.all([allGuardrails(), allKeyAssignments(), allMemberAssignments()]);
  return indexGuardrails(g, k, m);
}

export type GovernedVia = "workspace" | "member" | "key";

/**
 * The guardrails that govern a key's requests, outermost first, as the gateway combines them: its
 * workspace's default guardrail when it is stored (an unstored default has no rules), the guardrail
 * of the member who created the key (`creator_user_id`), and the key's own assignment.
 */
export function governingGuardrails(
  index: GuardrailIndex,
  key: Pick<Key, "hash" | "creator_user_id" | "workspace_id">,
  workspaces: readonly Pick<Workspace, "id" | "default_guardrail_id">[],
): { guardrail: Guardrail; via: GovernedVia }[] {
  const out: { guardrail: Guardrail; via: GovernedVia }[] = [];
  const push = (id: string | undefined, via: GovernedVia) => {
    const g = id === undefined ? undefined : index.byId.get(id);
    if (g) out.push({ guardrail: g, via });
  };
  push(workspaces.find((w) => w.id === key.workspace_id)?.default_guardrail_id, "workspace");
  if (key.creator_user_id !== null) push(index.byMember.get(key.creator_user_id), "member");
  push(index.byKey.get(key.hash.toLowerCase()), "key");
  return out;
}

/** The link to a guardrail on the Guardrails page (which opens its editor). */
export const guardrailHref = (id: string) => `/guardrails?id=${encodeURIComponent(id)}`;
