import type { OpenRouter } from "@openrouter/sdk";
import * as errors from "@openrouter/sdk/models/errors";
import { expect } from "vitest";

/** The typed class SDK 1.3.19 raises for a status, on the operations that map that status. */
export const TYPED_ERRORS = {
  400: errors.BadRequestResponseError,
  401: errors.UnauthorizedResponseError,
  403: errors.ForbiddenResponseError,
  404: errors.NotFoundResponseError,
  409: errors.ConflictResponseError,
  429: errors.TooManyRequestsResponseError,
  500: errors.InternalServerResponseError,
} as const;

export type Status = keyof typeof TYPED_ERRORS;

/** A hash, a UUID and a workspace reference that name nothing. */
export const NO_HASH = "f".repeat(64);
export const NO_UUID = "00000000-0000-4000-8000-000000000000";
export const NO_WORKSPACE = "no-such-workspace";
export const BOGUS_KEY = `sk-gh-v1-${"0".repeat(64)}`;
export const NO_MEMBER = "user_nobody";

/**
 * Every operation implemented today, with the statuses SDK 1.3.19 maps to a typed error for it
 * (compatibility-facts §A2–A5, §C1–C3, §E; the same lists as the `M.jsonErr(...)` matchers in
 * node_modules/@openrouter/sdk/esm/funcs/<op>.js), and one call that authentication, the
 * management-key check and the rate limiter see before anything else. The identifiers name nothing,
 * so repeating the call changes nothing (except creates, which is harmless).
 */
export const OPERATIONS: Record<
  string,
  { mapped: readonly Status[]; call: (sdk: OpenRouter) => Promise<unknown>; anyKey?: true }
> = {
  "apiKeys.create": {
    mapped: [400, 401, 403, 429, 500],
    call: (sdk) => sdk.apiKeys.create({ requestBody: { name: "probe" } }),
  },
  "apiKeys.list": { mapped: [400, 401, 429, 500], call: (sdk) => sdk.apiKeys.list() },
  "apiKeys.get": { mapped: [401, 404, 429, 500], call: (sdk) => sdk.apiKeys.get({ hash: NO_HASH }) },
  "apiKeys.update": {
    mapped: [400, 401, 404, 429, 500],
    call: (sdk) => sdk.apiKeys.update({ hash: NO_HASH, requestBody: { name: "probe" } }),
  },
  "apiKeys.delete": {
    mapped: [401, 404, 429, 500],
    call: (sdk) => sdk.apiKeys.delete({ hash: NO_HASH }),
  },
  "apiKeys.getCurrentKeyMetadata": {
    mapped: [401, 500],
    call: (sdk) => sdk.apiKeys.getCurrentKeyMetadata(),
    anyKey: true,
  },
  "workspaces.list": { mapped: [401, 500], call: (sdk) => sdk.workspaces.list() },
  "workspaces.create": {
    mapped: [400, 401, 403, 500],
    call: (sdk) => sdk.workspaces.create({ createWorkspaceRequest: { name: "probe", slug: "probe" } }),
  },
  "workspaces.get": { mapped: [401, 404, 500], call: (sdk) => sdk.workspaces.get({ id: NO_WORKSPACE }) },
  "workspaces.update": {
    mapped: [400, 401, 403, 404, 500],
    call: (sdk) => sdk.workspaces.update({ id: NO_WORKSPACE, updateWorkspaceRequest: { name: "probe" } }),
  },
  "workspaces.delete": {
    mapped: [400, 401, 403, 404, 500],
    call: (sdk) => sdk.workspaces.delete({ id: NO_WORKSPACE }),
  },
  "workspaces.listBudgets": {
    mapped: [401, 404, 500],
    call: (sdk) => sdk.workspaces.listBudgets({ workspaceRef: NO_WORKSPACE }),
  },
  "workspaces.setBudget": {
    mapped: [400, 401, 404, 500],
    call: (sdk) =>
      sdk.workspaces.setBudget({
        workspaceRef: NO_WORKSPACE,
        interval: "daily",
        upsertWorkspaceBudgetRequest: { limitUsd: 1 },
      }),
  },
  "workspaces.getBudget": {
    mapped: [400, 401, 404, 500],
    call: (sdk) => sdk.workspaces.getBudget({ workspaceRef: NO_WORKSPACE, interval: "daily" }),
  },
  "workspaces.deleteBudget": {
    mapped: [400, 401, 404, 500],
    call: (sdk) => sdk.workspaces.deleteBudget({ workspaceRef: NO_WORKSPACE, interval: "daily" }),
  },
  "workspaces.listMembers": {
    mapped: [401, 403, 404, 500],
    call: (sdk) => sdk.workspaces.listMembers({ id: NO_WORKSPACE }),
  },
  "workspaces.bulkAddMembers": {
    mapped: [400, 401, 403, 404, 500],
    call: (sdk) =>
      sdk.workspaces.bulkAddMembers({
        id: NO_WORKSPACE,
        bulkAddWorkspaceMembersRequest: { userIds: [NO_MEMBER] },
      }),
  },
  "workspaces.bulkRemoveMembers": {
    mapped: [400, 401, 403, 404, 500],
    call: (sdk) =>
      sdk.workspaces.bulkRemoveMembers({
        id: NO_WORKSPACE,
        bulkRemoveWorkspaceMembersRequest: { userIds: [NO_MEMBER] },
      }),
  },
  "organization.listMembers": { mapped: [401, 404, 500], call: (sdk) => sdk.organization.listMembers() },
  "observability.list": { mapped: [400, 401, 500], call: (sdk) => sdk.observability.list() },
  "observability.create": {
    mapped: [400, 401, 403, 409, 500],
    call: (sdk) =>
      sdk.observability.create({
        createObservabilityDestinationRequest: {
          name: "probe",
          type: "webhook",
          config: { url: "https://hooks.example.com/in" },
        },
      }),
  },
  "observability.get": { mapped: [401, 404, 500], call: (sdk) => sdk.observability.get({ id: NO_UUID }) },
  "observability.update": {
    mapped: [400, 401, 403, 404, 409, 500],
    call: (sdk) =>
      sdk.observability.update({ id: NO_UUID, updateObservabilityDestinationRequest: { name: "probe" } }),
  },
  "observability.delete": {
    mapped: [401, 404, 500],
    call: (sdk) => sdk.observability.delete({ id: NO_UUID }),
  },
};

export const OPERATION_NAMES = Object.keys(OPERATIONS);

export const isMapped = (op: string, status: Status): boolean => OPERATIONS[op]!.mapped.includes(status);

/** The error a promise rejects with; fails when it resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected the SDK call to throw, it resolved");
}

interface Seen {
  name: string;
  statusCode?: number;
  code?: unknown;
  messageIsText: boolean;
}

const seen = (e: unknown, code: unknown): Seen => {
  const err = e as { name?: string; statusCode?: number; message?: unknown };
  return {
    name: err.name ?? typeof e,
    statusCode: err.statusCode,
    code,
    messageIsText: typeof err.message === "string" && err.message.trim() !== "",
  };
};

/**
 * Asserts what the SDK raised for an error response:
 * - a status the operation maps: the typed class, `statusCode` and `error.code` equal to the
 *   status, and a non-empty `message` equal to `error.message` (the envelope parsed);
 * - a status it does not map: `OpenRouterDefaultError` with that `statusCode`, whose raw body is
 *   still the Gatehouse envelope with the same code and a non-empty message.
 * Returns the error for further checks.
 */
export async function expectSdkError(
  p: Promise<unknown>,
  status: Status,
  mapped: boolean,
): Promise<errors.OpenRouterError> {
  const e = await rejection(p);
  if (mapped) {
    const cls = TYPED_ERRORS[status];
    const typed = e as { error?: { code?: unknown; message?: unknown } };
    expect(seen(e, typed.error?.code)).toEqual({
      name: cls.name,
      statusCode: status,
      code: status,
      messageIsText: true,
    });
    expect(e).toBeInstanceOf(cls);
    expect(typed.error?.message).toBe((e as Error).message);
  } else {
    const body = JSON.parse((e as errors.OpenRouterError).body) as {
      error?: { code?: unknown; message?: unknown };
    };
    expect(seen(e, body.error?.code)).toEqual({
      name: "OpenRouterDefaultError",
      statusCode: status,
      code: status,
      messageIsText: true,
    });
    expect(e).toBeInstanceOf(errors.OpenRouterDefaultError);
    expect(typeof body.error?.message === "string" && body.error.message !== "").toBe(true);
  }
  return e as errors.OpenRouterError;
}
