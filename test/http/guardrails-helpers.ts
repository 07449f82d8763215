import { expect } from "vitest";
import type { TestApp } from "../helpers/app.js";

/** Shared by the guardrails HTTP tests: calls that must succeed, and records they read. */

export const G = "/api/v1/guardrails";

/** A call that must answer `status`; its JSON body. */
export async function ok(
  t: TestApp,
  method: "GET" | "POST" | "PATCH" | "DELETE",
  url: string,
  payload?: unknown,
  status = method === "POST" && url === G ? 201 : 200,
): Promise<any> {
  const r = await t.call({ method, url, ...(payload !== undefined ? { payload: payload as object } : {}) });
  expect(r.statusCode, `${method} ${url}: ${r.body}`).toBe(status);
  return r.json();
}

/** A call that must be refused with a 400 whose message is `message` (or matches it). */
export async function refused(
  t: TestApp,
  method: "POST" | "PATCH",
  url: string,
  payload: unknown,
  message: string | RegExp,
): Promise<any> {
  const r = await t.call({ method, url, payload: payload as object });
  expect(r.statusCode, `${method} ${url} ${JSON.stringify(payload).slice(0, 200)}: ${r.body}`).toBe(400);
  const body = r.json();
  if (typeof message === "string") expect(body.error.message).toBe(message);
  else expect(body.error.message).toMatch(message);
  return body;
}

/** Creates an ordinary key; its hash. */
export async function newKey(t: TestApp, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await ok(t, "POST", "/api/v1/keys", { name, ...extra }, 201)).data.hash as string;
}

/** Creates a member of the organization (Gatehouse's members API extension: docs/members.md); its id. */
export async function newMember(t: TestApp, email: string): Promise<string> {
  return (await ok(t, "POST", "/api/v1/organization/members", { email }, 201)).data.id as string;
}

/** The default guardrail id of a workspace, as its record names it. */
export async function defaultGuardrailOf(t: TestApp, workspaceId: string): Promise<string> {
  return (await ok(t, "GET", `/api/v1/workspaces/${workspaceId}`)).data.default_guardrail_id as string;
}
