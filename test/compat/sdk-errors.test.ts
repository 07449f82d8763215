import type { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { SAMPLE_CONFIGS } from "../http/destinations-fixtures.js";
import {
  BOGUS_KEY,
  NO_HASH,
  NO_MEMBER,
  NO_UUID,
  NO_WORKSPACE,
  OPERATIONS,
  OPERATION_NAMES,
  expectSdkError,
  isMapped,
  type Status,
} from "./helpers/sdk-errors.js";

/** State the error cases point at, created through the SDK before they run. */
interface Fixtures {
  /** An ordinary (non-management) key: 403 on every management operation. */
  ordinaryKey: string;
  /** Workspace "errs": one active key, a weekly budget of 50 USD, five ramp destinations. */
  wsId: string;
  activeKeyHash: string;
  deletedKeyHash: string;
  webhookId: string;
  deletedDestinationId: string;
}

type Case = {
  op: string;
  status: Status;
  why: string;
  call: (sdk: OpenRouter, fx: Fixtures) => Promise<unknown>;
  /** Part of the message the server must give (the SDK surfaces it as `message`). */
  message?: string | RegExp;
};

/**
 * The 400, 404 and 409 answers, provoked for real with input the SDK passes through unchecked
 * (its enums are open strings and its numbers have no bounds). `as never` marks a value the
 * SDK's TypeScript types would refuse but its runtime sends as is.
 */
const CASES: Case[] = [
  // apiKeys.create
  {
    op: "apiKeys.create",
    status: 400,
    why: "empty name",
    call: (sdk) => sdk.apiKeys.create({ requestBody: { name: "" } }),
  },
  {
    op: "apiKeys.create",
    status: 400,
    why: 'limit_reset "yearly" (open enum)',
    call: (sdk) => sdk.apiKeys.create({ requestBody: { name: "x", limitReset: "yearly" as never } }),
    message: "limit_reset",
  },
  {
    op: "apiKeys.create",
    status: 400,
    why: "negative limit",
    call: (sdk) => sdk.apiKeys.create({ requestBody: { name: "x", limit: -1 } }),
    message: "limit",
  },
  {
    op: "apiKeys.create",
    status: 400,
    why: "expires_at in the past",
    call: (sdk) =>
      sdk.apiKeys.create({ requestBody: { name: "x", expiresAt: new Date("2020-01-01T00:00:00Z") } }),
    message: "expires_at",
  },
  {
    op: "apiKeys.create",
    status: 400,
    why: "workspace_id of no workspace",
    call: (sdk) => sdk.apiKeys.create({ requestBody: { name: "x", workspaceId: NO_UUID } }),
    message: "workspace_id",
  },
  // apiKeys.list
  {
    op: "apiKeys.list",
    status: 400,
    why: "workspace_id not a uuid",
    call: (sdk) => sdk.apiKeys.list({ workspaceId: "not-a-uuid" }),
    message: "workspace_id",
  },
  {
    op: "apiKeys.list",
    status: 400,
    why: "offset -1",
    call: (sdk) => sdk.apiKeys.list({ offset: -1 }),
    message: "offset",
  },
  // apiKeys.get
  { op: "apiKeys.get", status: 404, why: "unknown hash", call: (sdk) => sdk.apiKeys.get({ hash: NO_HASH }) },
  { op: "apiKeys.get", status: 404, why: "malformed hash", call: (sdk) => sdk.apiKeys.get({ hash: "abc" }) },
  {
    op: "apiKeys.get",
    status: 404,
    why: "deleted key",
    call: (sdk, fx) => sdk.apiKeys.get({ hash: fx.deletedKeyHash }),
  },
  // apiKeys.update
  {
    op: "apiKeys.update",
    status: 400,
    why: 'limit_reset "yearly" (open enum)',
    call: (sdk, fx) =>
      sdk.apiKeys.update({ hash: fx.activeKeyHash, requestBody: { limitReset: "yearly" as never } }),
    message: "limit_reset: must be one of daily, weekly, monthly",
  },
  {
    op: "apiKeys.update",
    status: 400,
    why: "negative limit",
    call: (sdk, fx) => sdk.apiKeys.update({ hash: fx.activeKeyHash, requestBody: { limit: -1 } }),
    message: "limit",
  },
  {
    op: "apiKeys.update",
    status: 404,
    why: "unknown hash",
    call: (sdk) => sdk.apiKeys.update({ hash: NO_HASH, requestBody: { name: "x" } }),
  },
  // apiKeys.delete
  {
    op: "apiKeys.delete",
    status: 404,
    why: "unknown hash",
    call: (sdk) => sdk.apiKeys.delete({ hash: NO_HASH }),
  },
  {
    op: "apiKeys.delete",
    status: 404,
    why: "already deleted",
    call: (sdk, fx) => sdk.apiKeys.delete({ hash: fx.deletedKeyHash }),
  },
  // workspaces.list: 400 is not mapped by the SDK for this operation.
  {
    op: "workspaces.list",
    status: 400,
    why: "limit 0",
    call: (sdk) => sdk.workspaces.list({ limit: 0 }),
  },
  {
    op: "workspaces.list",
    status: 400,
    why: "limit 101",
    call: (sdk) => sdk.workspaces.list({ limit: 101 }),
  },
  // workspaces.create
  {
    op: "workspaces.create",
    status: 400,
    why: "slug with spaces and capitals",
    call: (sdk) => sdk.workspaces.create({ createWorkspaceRequest: { name: "x", slug: "Not Valid" } }),
    message: "slug",
  },
  {
    op: "workspaces.create",
    status: 400,
    why: "io_logging_sampling_rate 2",
    call: (sdk) =>
      sdk.workspaces.create({
        createWorkspaceRequest: { name: "x", slug: "x-rate", ioLoggingSamplingRate: 2 },
      }),
  },
  {
    op: "workspaces.create",
    status: 409,
    why: "slug taken (409 is not mapped for this operation)",
    call: (sdk) => sdk.workspaces.create({ createWorkspaceRequest: { name: "again", slug: "errs" } }),
    message: "slug",
  },
  // workspaces.get
  {
    op: "workspaces.get",
    status: 404,
    why: "unknown slug",
    call: (sdk) => sdk.workspaces.get({ id: NO_WORKSPACE }),
  },
  {
    op: "workspaces.get",
    status: 404,
    why: "unknown uuid",
    call: (sdk) => sdk.workspaces.get({ id: NO_UUID }),
  },
  // workspaces.update
  {
    op: "workspaces.update",
    status: 400,
    why: "invalid slug",
    call: (sdk, fx) => sdk.workspaces.update({ id: fx.wsId, updateWorkspaceRequest: { slug: "Bad Slug" } }),
    message: "slug",
  },
  {
    op: "workspaces.update",
    status: 400,
    why: "blank name",
    call: (sdk, fx) => sdk.workspaces.update({ id: fx.wsId, updateWorkspaceRequest: { name: "   " } }),
    message: "name",
  },
  {
    op: "workspaces.update",
    status: 404,
    why: "unknown workspace",
    call: (sdk) => sdk.workspaces.update({ id: NO_WORKSPACE, updateWorkspaceRequest: { name: "x" } }),
  },
  {
    op: "workspaces.update",
    status: 409,
    why: "slug taken (409 is not mapped for this operation)",
    call: (sdk, fx) => sdk.workspaces.update({ id: fx.wsId, updateWorkspaceRequest: { slug: "default" } }),
  },
  // workspaces.delete
  {
    op: "workspaces.delete",
    status: 400,
    why: "default workspace without confirmation",
    call: (sdk) => sdk.workspaces.delete({ id: "default" }),
    message: "confirm_default_workspace_deletion",
  },
  {
    op: "workspaces.delete",
    status: 400,
    why: "workspace with an active key",
    call: (sdk, fx) => sdk.workspaces.delete({ id: fx.wsId }),
    message: "active API key",
  },
  {
    op: "workspaces.delete",
    status: 404,
    why: "unknown workspace",
    call: (sdk) => sdk.workspaces.delete({ id: NO_WORKSPACE }),
  },
  // workspaces.listBudgets
  {
    op: "workspaces.listBudgets",
    status: 404,
    why: "unknown workspace",
    call: (sdk) => sdk.workspaces.listBudgets({ workspaceRef: NO_WORKSPACE }),
  },
  // workspaces.setBudget
  {
    op: "workspaces.setBudget",
    status: 400,
    why: 'interval "yearly" (open enum)',
    call: (sdk) =>
      sdk.workspaces.setBudget({
        workspaceRef: "errs",
        interval: "yearly" as never,
        upsertWorkspaceBudgetRequest: { limitUsd: 5 },
      }),
    message: "interval: must be one of daily, weekly, monthly, lifetime",
  },
  {
    op: "workspaces.setBudget",
    status: 400,
    why: "limit_usd -1",
    call: (sdk) =>
      sdk.workspaces.setBudget({
        workspaceRef: "errs",
        interval: "daily",
        upsertWorkspaceBudgetRequest: { limitUsd: -1 },
      }),
    message: "limit_usd",
  },
  {
    op: "workspaces.setBudget",
    status: 400,
    why: "limit_usd 0",
    call: (sdk) =>
      sdk.workspaces.setBudget({
        workspaceRef: "errs",
        interval: "daily",
        upsertWorkspaceBudgetRequest: { limitUsd: 0 },
      }),
    message: "limit_usd",
  },
  {
    op: "workspaces.setBudget",
    status: 400,
    why: "ordering breach: monthly 40 below weekly 50",
    call: (sdk) =>
      sdk.workspaces.setBudget({
        workspaceRef: "errs",
        interval: "monthly",
        upsertWorkspaceBudgetRequest: { limitUsd: 40 },
      }),
    message: "weekly budget (50 USD)",
  },
  {
    op: "workspaces.setBudget",
    status: 404,
    why: "unknown workspace",
    call: (sdk) =>
      sdk.workspaces.setBudget({
        workspaceRef: NO_WORKSPACE,
        interval: "daily",
        upsertWorkspaceBudgetRequest: { limitUsd: 1 },
      }),
  },
  // workspaces.getBudget
  {
    op: "workspaces.getBudget",
    status: 400,
    why: 'interval "foo" (open enum)',
    call: (sdk) => sdk.workspaces.getBudget({ workspaceRef: "errs", interval: "foo" as never }),
    message: "interval",
  },
  {
    op: "workspaces.getBudget",
    status: 404,
    why: "unknown workspace",
    call: (sdk) => sdk.workspaces.getBudget({ workspaceRef: NO_WORKSPACE, interval: "daily" }),
  },
  {
    op: "workspaces.getBudget",
    status: 404,
    why: "no budget for the interval",
    call: (sdk) => sdk.workspaces.getBudget({ workspaceRef: "errs", interval: "daily" }),
  },
  // workspaces.deleteBudget
  {
    op: "workspaces.deleteBudget",
    status: 400,
    why: 'interval "foo" (open enum)',
    call: (sdk) => sdk.workspaces.deleteBudget({ workspaceRef: "errs", interval: "foo" as never }),
    message: "interval",
  },
  {
    op: "workspaces.deleteBudget",
    status: 404,
    why: "unknown workspace",
    call: (sdk) => sdk.workspaces.deleteBudget({ workspaceRef: NO_WORKSPACE, interval: "daily" }),
  },
  // observability.list
  {
    op: "observability.list",
    status: 400,
    why: "limit 0",
    call: (sdk) => sdk.observability.list({ limit: 0 }),
  },
  {
    op: "observability.list",
    status: 400,
    why: "workspace_id not a uuid",
    call: (sdk) => sdk.observability.list({ workspaceId: "not-a-uuid" }),
    message: "workspace_id",
  },
  {
    op: "observability.list",
    status: 400,
    why: "workspace_id of no workspace",
    call: (sdk) => sdk.observability.list({ workspaceId: NO_UUID }),
    message: "workspace_id",
  },
  // observability.create
  {
    op: "observability.create",
    status: 400,
    why: "required config field missing",
    call: (sdk) =>
      sdk.observability.create({
        createObservabilityDestinationRequest: {
          name: "x",
          type: "langfuse",
          config: { publicKey: "pk-lf-12345" },
        },
      }),
    message: "config.secretKey",
  },
  {
    op: "observability.create",
    status: 400,
    why: 'type "nope" (open enum)',
    call: (sdk) =>
      sdk.observability.create({
        createObservabilityDestinationRequest: { name: "x", type: "nope" as never, config: {} },
      }),
    message: "type",
  },
  {
    op: "observability.create",
    status: 400,
    why: "sampling_rate 0",
    call: (sdk) =>
      sdk.observability.create({
        createObservabilityDestinationRequest: {
          name: "x",
          type: "webhook",
          config: SAMPLE_CONFIGS.webhook,
          samplingRate: 0,
        },
      }),
    message: "sampling_rate",
  },
  {
    op: "observability.create",
    status: 400,
    why: "empty regions",
    call: (sdk) =>
      sdk.observability.create({
        createObservabilityDestinationRequest: {
          name: "x",
          type: "webhook",
          config: SAMPLE_CONFIGS.webhook,
          regions: [],
        },
      }),
    message: "regions",
  },
  {
    op: "observability.create",
    status: 409,
    why: "sixth destination of one type in a workspace",
    call: (sdk, fx) =>
      sdk.observability.create({
        createObservabilityDestinationRequest: {
          name: "sixth",
          type: "ramp",
          config: SAMPLE_CONFIGS.ramp,
          workspaceId: fx.wsId,
        },
      }),
    message: "at most 5",
  },
  // observability.get
  {
    op: "observability.get",
    status: 404,
    why: "unknown id",
    call: (sdk) => sdk.observability.get({ id: NO_UUID }),
  },
  {
    op: "observability.get",
    status: 404,
    why: "malformed id",
    call: (sdk) => sdk.observability.get({ id: "abc" }),
  },
  {
    op: "observability.get",
    status: 404,
    why: "deleted destination",
    call: (sdk, fx) => sdk.observability.get({ id: fx.deletedDestinationId }),
  },
  // observability.update. Its 409 is mapped by the SDK but unreachable in Gatehouse: the only
  // conflict is the per-type cap at create, and PATCH cannot change a destination's type.
  {
    op: "observability.update",
    status: 400,
    why: "sampling_rate 2",
    call: (sdk, fx) =>
      sdk.observability.update({
        id: fx.webhookId,
        updateObservabilityDestinationRequest: { samplingRate: 2 },
      }),
    message: "sampling_rate",
  },
  {
    op: "observability.update",
    status: 400,
    why: "required config field emptied",
    call: (sdk, fx) =>
      sdk.observability.update({
        id: fx.webhookId,
        updateObservabilityDestinationRequest: { config: { url: "" } },
      }),
    message: "config.url",
  },
  {
    op: "observability.update",
    status: 404,
    why: "unknown id",
    call: (sdk) =>
      sdk.observability.update({ id: NO_UUID, updateObservabilityDestinationRequest: { name: "x" } }),
  },
  // workspaces.listMembers, bulkAddMembers, bulkRemoveMembers
  {
    op: "workspaces.listMembers",
    status: 404,
    why: "unknown workspace",
    call: (sdk) => sdk.workspaces.listMembers({ id: NO_WORKSPACE }),
  },
  {
    op: "workspaces.bulkAddMembers",
    status: 400,
    why: "a user id that names no member",
    call: (sdk, fx) =>
      sdk.workspaces.bulkAddMembers({
        id: fx.wsId,
        bulkAddWorkspaceMembersRequest: { userIds: [NO_MEMBER] },
      }),
    message: `user_ids: "${NO_MEMBER}" is not a member of this organization`,
  },
  {
    op: "workspaces.bulkAddMembers",
    status: 400,
    why: "no user ids",
    call: (sdk, fx) =>
      sdk.workspaces.bulkAddMembers({ id: fx.wsId, bulkAddWorkspaceMembersRequest: { userIds: [] } }),
    message: "user_ids: at least 1 item",
  },
  {
    op: "workspaces.bulkAddMembers",
    status: 404,
    why: "unknown workspace",
    call: (sdk) =>
      sdk.workspaces.bulkAddMembers({
        id: NO_WORKSPACE,
        bulkAddWorkspaceMembersRequest: { userIds: [NO_MEMBER] },
      }),
  },
  {
    op: "workspaces.bulkRemoveMembers",
    status: 400,
    why: "a user id that names no member",
    call: (sdk, fx) =>
      sdk.workspaces.bulkRemoveMembers({
        id: fx.wsId,
        bulkRemoveWorkspaceMembersRequest: { userIds: [NO_MEMBER] },
      }),
    message: "user_ids",
  },
  {
    op: "workspaces.bulkRemoveMembers",
    status: 400,
    why: "the default workspace",
    call: (sdk) =>
      sdk.workspaces.bulkRemoveMembers({
        id: "default",
        bulkRemoveWorkspaceMembersRequest: { userIds: [NO_MEMBER] },
      }),
    message: /^id: the default workspace holds every member/,
  },
  {
    op: "workspaces.bulkRemoveMembers",
    status: 404,
    why: "unknown workspace",
    call: (sdk) =>
      sdk.workspaces.bulkRemoveMembers({
        id: NO_WORKSPACE,
        bulkRemoveWorkspaceMembersRequest: { userIds: [NO_MEMBER] },
      }),
  },
  // observability.delete
  {
    op: "observability.delete",
    status: 404,
    why: "unknown id",
    call: (sdk) => sdk.observability.delete({ id: NO_UUID }),
  },
  {
    op: "observability.delete",
    status: 404,
    why: "already deleted",
    call: (sdk, fx) => sdk.observability.delete({ id: fx.deletedDestinationId }),
  },
];

/** Mapped (operation, status) pairs that no request can produce in Gatehouse, with the reason. */
const UNREACHABLE: Record<string, string> = {
  "observability.update 409": "PATCH cannot change the type, so the per-type cap cannot be breached",
  "organization.listMembers 404": "the caller's organization always exists: the list is never missing",
};

describe("SDK 1.3.19 error classes, provoked for real over a socket", () => {
  let s: ListeningApp;
  let sdk: OpenRouter;
  let fx: Fixtures;
  beforeAll(async () => {
    s = await startListening();
    sdk = s.sdk();
    const ws = (await sdk.workspaces.create({ createWorkspaceRequest: { name: "Errors", slug: "errs" } }))
      .data;
    await sdk.workspaces.setBudget({
      workspaceRef: ws.id,
      interval: "weekly",
      upsertWorkspaceBudgetRequest: { limitUsd: 50 },
    });
    const ordinary = await sdk.apiKeys.create({ requestBody: { name: "ordinary" } });
    const active = await sdk.apiKeys.create({ requestBody: { name: "active", workspaceId: ws.id } });
    const gone = await sdk.apiKeys.create({ requestBody: { name: "gone" } });
    await sdk.apiKeys.delete({ hash: gone.data.hash });
    const dest = (kind: "webhook" | "ramp", name: string) =>
      sdk.observability
        .create({
          createObservabilityDestinationRequest: {
            name,
            type: kind,
            config: SAMPLE_CONFIGS[kind],
            workspaceId: ws.id,
          },
        })
        .then((r) => (r.data as { id: string }).id);
    for (let i = 0; i < 5; i++) await dest("ramp", `ramp ${i}`);
    const webhookId = await dest("webhook", "hook");
    const deletedDestinationId = await dest("webhook", "deleted hook");
    await sdk.observability.delete({ id: deletedDestinationId });
    fx = {
      ordinaryKey: ordinary.key,
      wsId: ws.id,
      activeKeyHash: active.data.hash,
      deletedKeyHash: gone.data.hash,
      webhookId,
      deletedDestinationId,
    };
  });
  afterAll(() => s.close());

  it.each(CASES.map((c) => [`${c.op} → ${c.status}: ${c.why}`, c] as const))("%s", async (_, c) => {
    const e = await expectSdkError(c.call(sdk, fx), c.status, isMapped(c.op, c.status));
    if (c.message !== undefined) {
      const body = JSON.parse(e.body) as { error: { message: string } };
      if (typeof c.message === "string") expect(body.error.message).toContain(c.message);
      else expect(body.error.message).toMatch(c.message);
    }
  });

  it.each(OPERATION_NAMES)("%s → 401 with an unknown key", async (op) => {
    const e = await expectSdkError(OPERATIONS[op]!.call(s.sdk(BOGUS_KEY)), 401, isMapped(op, 401));
    expect(e.message === "Invalid or expired API key" || e.body.includes("Invalid or expired API key")).toBe(
      true,
    );
  });

  it.each(OPERATION_NAMES.filter((op) => !OPERATIONS[op]!.anyKey))(
    "%s → 403 with an ordinary key (OpenRouterDefaultError where the SDK maps no 403)",
    async (op) => {
      await expectSdkError(OPERATIONS[op]!.call(s.sdk(fx.ordinaryKey)), 403, isMapped(op, 403));
    },
  );

  it("GET /key works with an ordinary key, so getCurrentKeyMetadata has no 403", async () => {
    const res = await s.sdk(fx.ordinaryKey).apiKeys.getCurrentKeyMetadata();
    expect(res.data.isManagementKey).toBe(false);
  });

  it("the management key itself is not a /keys record: 404 on get, update and delete", async () => {
    const own = hashKey(s.key);
    await expectSdkError(sdk.apiKeys.get({ hash: own }), 404, true);
    await expectSdkError(sdk.apiKeys.update({ hash: own, requestBody: { disabled: true } }), 404, true);
    await expectSdkError(sdk.apiKeys.delete({ hash: own }), 404, true);
  });

  it("refused requests changed nothing the fixtures rely on", async () => {
    const ws = (await sdk.workspaces.get({ id: fx.wsId })).data;
    expect(ws.slug).toBe("errs");
    expect(
      (await sdk.workspaces.listBudgets({ workspaceRef: "errs" })).data.map((b) => b.resetInterval),
    ).toEqual(["weekly"]);
    const key = (await sdk.apiKeys.get({ hash: fx.activeKeyHash })).data;
    expect(key).toMatchObject({ limit: null, limitReset: null, disabled: false });
    const webhook = (await sdk.observability.get({ id: fx.webhookId })).data;
    expect(webhook).toMatchObject({ samplingRate: 1, config: { url: SAMPLE_CONFIGS.webhook.url } });
  });
});

describe("coverage of the error matrix", () => {
  it("every status the SDK maps for an operation is provoked by some test", () => {
    const covered = new Set<string>();
    for (const c of CASES) covered.add(`${c.op} ${c.status}`);
    for (const op of OPERATION_NAMES) {
      covered.add(`${op} 401`);
      if (!OPERATIONS[op]!.anyKey) covered.add(`${op} 403`);
      // sdk-errors-limits.test.ts: 429 and 500 for every operation.
      covered.add(`${op} 429`);
      covered.add(`${op} 500`);
    }
    const missing = OPERATION_NAMES.flatMap((op) =>
      OPERATIONS[op]!.mapped.map((st) => `${op} ${st}`).filter((k) => !covered.has(k) && !(k in UNREACHABLE)),
    );
    expect(missing).toEqual([]);
  });
});
