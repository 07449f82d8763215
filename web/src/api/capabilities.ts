import { API_BASE } from "./client.ts";

/**
 * What this server offers beyond the management API, read once from its OpenAPI document: the
 * Playground sends through whichever of chat completions, Responses and Messages it has,
 * destination checks need the test and deliveries endpoints, the Provider keys page the BYOK
 * endpoints, the Generations page GET /generation, the Guardrails page /guardrails, the Members
 * page /organization/members. Pages hide what the server does not have.
 */
export interface Capabilities {
  chatCompletions: boolean;
  responses: boolean;
  messages: boolean;
  destinationTest: boolean;
  destinationDeliveries: boolean;
  byok: boolean;
  generation: boolean;
  guardrails: boolean;
  members: boolean;
  /** GET /workspaces/{id}/members and its add and remove (the SDK's workspaces.*Members). */
  workspaceMembers: boolean;
}

let loaded: Promise<Capabilities> | null = null;

export function capabilities(): Promise<Capabilities> {
  loaded ??= fetch(`${API_BASE}/openapi.json`, { credentials: "omit" })
    .then((r) => (r.ok ? (r.json() as Promise<{ paths?: Record<string, unknown> }>) : { paths: {} }))
    .then((doc) => {
      const has = (p: string) => Object.prototype.hasOwnProperty.call(doc.paths ?? {}, p);
      return {
        chatCompletions: has("/chat/completions"),
        responses: has("/responses"),
        messages: has("/messages"),
        destinationTest: has("/observability/destinations/{id}/test"),
        destinationDeliveries: has("/observability/destinations/{id}/deliveries"),
        byok: has("/byok"),
        generation: has("/generation"),
        guardrails: has("/guardrails"),
        members: has("/organization/members"),
        workspaceMembers: has("/workspaces/{id}/members"),
      };
    })
    .catch(() => ({
      chatCompletions: false,
      responses: false,
      messages: false,
      destinationTest: false,
      destinationDeliveries: false,
      byok: false,
      generation: false,
      guardrails: false,
      members: false,
      workspaceMembers: false,
    }));
  return loaded;
}
