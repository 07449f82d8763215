import {
  ListWorkspaceBudgetsResponse$inboundSchema,
  UpsertWorkspaceBudgetResponse$inboundSchema,
} from "@openrouter/sdk/models";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { insertKey } from "../../src/domain/keys/key-repo.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { addUsage } from "../../src/domain/usage/ledger.js";
import { hashKey, keyLabel, newId, newKeyString } from "../../src/lib/ids.js";
import { usdToNano } from "../../src/lib/money.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";

const url = (interval: string, ref = "default") => `/api/v1/workspaces/${ref}/budgets/${interval}`;

describe("workspace budgets", () => {
  let t: TestApp;
  const put = (interval: string, payload: unknown, ref = "default") =>
    t.call({ method: "PUT", url: url(interval, ref), payload: payload as Record<string, unknown> });
  const get = (interval: string, ref = "default") => t.call({ method: "GET", url: url(interval, ref) });
  const list = (ref = "default") => t.call({ method: "GET", url: `/api/v1/workspaces/${ref}/budgets` });
  const limits = async () =>
    Object.fromEntries(
      (await list())
        .json()
        .data.map((b: { reset_interval: string | null; limit_usd: number }) => [
          b.reset_interval ?? "lifetime",
          b.limit_usd,
        ]),
    );

  beforeEach(async () => {
    t = await makeTestApp();
  });
  afterEach(() => t.close());

  describe("PUT", () => {
    it("creates a budget: 200 with data and include_byok_in_budgets, parsed by the SDK", async () => {
      const res = await put("weekly", { limit_usd: 25.5 });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        data: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          workspace_id: t.workspaceId,
          reset_interval: "weekly",
          limit_usd: 25.5,
          created_at: "2026-11-18T12:00:00.000Z",
          updated_at: "2026-11-18T12:00:00.000Z",
          spent_usd: 0,
          remaining_usd: 25.5,
          // 2026-11-18 is a Wednesday; the ISO week ends Monday 2026-11-23 00:00 UTC.
          resets_at: "2026-11-23T00:00:00.000Z",
        },
        include_byok_in_budgets: false,
      });
      const parsed = UpsertWorkspaceBudgetResponse$inboundSchema.parse(res.json());
      expect(parsed.data.limitUsd).toBe(25.5);
      expect(parsed.includeByokInBudgets).toBe(false);
    });

    it("returns reset_interval null and resets_at null for lifetime", async () => {
      const res = await put("lifetime", { limit_usd: 1000 });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({ reset_interval: null, resets_at: null, limit_usd: 1000 });
      expect(UpsertWorkspaceBudgetResponse$inboundSchema.parse(res.json()).data.resetInterval).toBeNull();
    });

    it("gives each interval its window end", async () => {
      const ends: Record<string, string> = {};
      for (const [i, limit] of [
        ["daily", 1],
        ["weekly", 2],
        ["monthly", 3],
      ] as const) {
        ends[i] = (await put(i, { limit_usd: limit })).json().data.resets_at;
      }
      expect(ends).toEqual({
        daily: "2026-11-19T00:00:00.000Z",
        weekly: "2026-11-23T00:00:00.000Z",
        monthly: "2026-12-01T00:00:00.000Z",
      });
    });

    it("updates in place: same id and created_at, new limit and updated_at", async () => {
      const first = (await put("monthly", { limit_usd: 100 })).json().data;
      t.clock.advance(90_000);
      const second = await put("monthly", { limit_usd: 150 });
      expect(second.statusCode).toBe(200);
      expect(second.json().data).toMatchObject({
        id: first.id,
        created_at: first.created_at,
        updated_at: "2026-11-18T12:01:30.000Z",
        limit_usd: 150,
      });
      expect((await list()).json().data).toHaveLength(1);
    });

    it("addresses the workspace by id or slug, and answers 404 for an unknown one", async () => {
      const ws = (
        await t.call({ method: "POST", url: "/api/v1/workspaces", payload: { name: "Team", slug: "team" } })
      ).json().data;
      expect((await put("daily", { limit_usd: 1 }, "team")).json().data.workspace_id).toBe(ws.id);
      expect((await get("daily", ws.id)).json().data.workspace_id).toBe(ws.id);
      expect((await get("daily", ws.id.toUpperCase())).statusCode).toBe(200);
      for (const ref of ["nope", newId(), "Not_A_Slug"]) {
        const res = await put("daily", { limit_usd: 1 }, ref);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ error: { code: 404, message: "Workspace not found", metadata: null } });
      }
    });

    it.each([["yearly"], ["Daily"], ["day"], ["0"]])("refuses interval %s with 400", async (interval) => {
      const res = await put(interval, { limit_usd: 1 });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error: {
          code: 400,
          message: "interval: must be one of daily, weekly, monthly, lifetime",
          metadata: null,
        },
      });
    });

    it.each([
      [{}, "limit_usd: is required"],
      [{ include_byok_in_budgets: true }, "limit_usd: is required"],
      [{ limit_usd: 0 }, "limit_usd: must be > 0"],
      [{ limit_usd: -5 }, "limit_usd: must be > 0"],
      [{ limit_usd: 1_000_000_000.01 }, "limit_usd: must be <= 1000000000"],
      [{ limit_usd: "10" }, "limit_usd: must be number"],
      [{ limit_usd: null }, "limit_usd: must be number"],
      [{ limit_usd: 1e-12 }, "limit_usd: must be at least 0.000000001"],
      [{ limit_usd: 5, include_byok_in_budgets: "true" }, "include_byok_in_budgets: must be boolean"],
      [{ limit_usd: 5, include_byok_in_budgets: 1 }, "include_byok_in_budgets: must be boolean"],
    ])("refuses %j with 400 and changes nothing", async (payload, message) => {
      const res = await put("daily", payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain(message);
      expect((await list()).json()).toEqual({ data: [], include_byok_in_budgets: false });
    });

    it("refuses a body that is not JSON or not an object", async () => {
      const text = await t.call({
        method: "PUT",
        url: url("daily"),
        payload: "limit_usd=5",
        headers: { "content-type": "text/plain" },
      });
      expect(text.statusCode).toBe(415);
      const arr = await t.call({ method: "PUT", url: url("daily"), payload: [1] as never });
      expect(arr.statusCode).toBe(400);
    });

    it("accepts the largest limit (1e9 USD) exactly", async () => {
      const res = await put("lifetime", { limit_usd: 1_000_000_000 });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.limit_usd).toBe(1_000_000_000);
      expect((await put("monthly", { limit_usd: 0.000000001 })).json().data.limit_usd).toBe(1e-9);
    });
  });

  describe("ordering lifetime > monthly > weekly > daily", () => {
    it("refuses a narrower budget not below a wider one, naming the conflicting interval and limit", async () => {
      await put("weekly", { limit_usd: 50 });
      const res = await put("daily", { limit_usd: 100 });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toBe(
        "limit_usd: the daily budget must be less than the weekly budget (50 USD); " +
          "limits must strictly decrease: lifetime > monthly > weekly > daily",
      );
      expect(res.json().error.metadata).toEqual({
        conflicting_interval: "weekly",
        conflicting_limit_usd: 50,
      });
      expect(await limits()).toEqual({ weekly: 50 });
    });

    it("refuses a wider budget not above a narrower one", async () => {
      await put("daily", { limit_usd: 10 });
      const res = await put("lifetime", { limit_usd: 10 });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain(
        "the lifetime budget must be greater than the daily budget (10 USD)",
      );
      expect(await limits()).toEqual({ daily: 10 });
    });

    it("compares every pair, not only neighbours", async () => {
      await put("daily", { limit_usd: 100 });
      const res = await put("monthly", { limit_usd: 50 });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.metadata).toEqual({
        conflicting_interval: "daily",
        conflicting_limit_usd: 100,
      });

      await put("lifetime", { limit_usd: 1000 });
      await put("monthly", { limit_usd: 500 });
      await put("weekly", { limit_usd: 200 });
      const tooHigh = await put("daily", { limit_usd: 600 });
      expect(tooHigh.statusCode).toBe(400);
      expect(tooHigh.json().error.metadata.conflicting_interval).toBe("weekly");
      const lifetimeTooLow = await put("lifetime", { limit_usd: 150 });
      // Below weekly and monthly: the tightest bound (monthly 500) is named.
      expect(lifetimeTooLow.json().error.message).toContain(
        "the lifetime budget must be greater than the monthly budget (500 USD)",
      );
      expect(lifetimeTooLow.json().error.metadata).toEqual({
        conflicting_interval: "monthly",
        conflicting_limit_usd: 500,
      });
      // Above weekly and monthly: the tightest bound (weekly 200) is named.
      const dailyTooHigh = await put("daily", { limit_usd: 700 });
      expect(dailyTooHigh.json().error.metadata).toEqual({
        conflicting_interval: "weekly",
        conflicting_limit_usd: 200,
      });
      expect(await limits()).toEqual({ daily: 100, weekly: 200, monthly: 500, lifetime: 1000 });
    });

    it("accepts a strictly decreasing set, in any order of creation, and compares exactly", async () => {
      expect((await put("lifetime", { limit_usd: 0.3 })).statusCode).toBe(200);
      expect((await put("daily", { limit_usd: 0.1 })).statusCode).toBe(200);
      expect((await put("monthly", { limit_usd: 0.2 + 0.000000001 })).statusCode).toBe(200);
      expect((await put("weekly", { limit_usd: 0.2 })).statusCode).toBe(200);
      expect((await put("weekly", { limit_usd: 0.200000001 })).statusCode).toBe(400);
      expect(await limits()).toEqual({ daily: 0.1, weekly: 0.2, monthly: 0.200000001, lifetime: 0.3 });
    });

    it("a refused PUT does not apply include_byok_in_budgets either", async () => {
      await put("weekly", { limit_usd: 50 });
      const res = await put("daily", { limit_usd: 60, include_byok_in_budgets: true });
      expect(res.statusCode).toBe(400);
      expect((await list()).json().include_byok_in_budgets).toBe(false);
    });

    it("deleting a budget keeps the rest valid and frees the range", async () => {
      await put("daily", { limit_usd: 10 });
      await put("weekly", { limit_usd: 20 });
      await put("monthly", { limit_usd: 30 });
      expect((await t.call({ method: "DELETE", url: url("weekly") })).statusCode).toBe(200);
      expect((await put("weekly", { limit_usd: 25 })).statusCode).toBe(200);
      expect(await limits()).toEqual({ daily: 10, weekly: 25, monthly: 30 });
    });
  });

  describe("GET, list and DELETE", () => {
    it("reads one interval, 404 when it has no budget", async () => {
      const created = (await put("daily", { limit_usd: 3 })).json();
      const res = await get("daily");
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(created);
      const missing = await get("weekly");
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ error: { code: 404, message: "Budget not found", metadata: null } });
      expect((await get("hourly")).statusCode).toBe(400);
      expect((await get("daily", "nope")).statusCode).toBe(404);
    });

    it("lists budgets ordered daily, weekly, monthly, lifetime", async () => {
      expect((await list()).json()).toEqual({ data: [], include_byok_in_budgets: false });
      await put("lifetime", { limit_usd: 100 });
      await put("weekly", { limit_usd: 20 });
      await put("monthly", { limit_usd: 50 });
      await put("daily", { limit_usd: 5 });
      const res = await list();
      expect(res.statusCode).toBe(200);
      expect(res.json().data.map((b: { reset_interval: string | null }) => b.reset_interval)).toEqual([
        "daily",
        "weekly",
        "monthly",
        null,
      ]);
      expect(() => ListWorkspaceBudgetsResponse$inboundSchema.parse(res.json())).not.toThrow();
      expect((await list("nope")).statusCode).toBe(404);
    });

    it("DELETE answers {deleted: true}, also when there is no budget", async () => {
      await put("daily", { limit_usd: 5 });
      const res = await t.call({ method: "DELETE", url: url("daily") });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ deleted: true });
      expect((await get("daily")).statusCode).toBe(404);
      const again = await t.call({ method: "DELETE", url: url("daily") });
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual({ deleted: true });
      expect((await t.call({ method: "DELETE", url: url("yearly") })).statusCode).toBe(400);
      expect((await t.call({ method: "DELETE", url: url("daily", "nope") })).statusCode).toBe(404);
    });
  });

  describe("include_byok_in_budgets", () => {
    it("is workspace-wide: set by one PUT, returned by every budget operation and on the workspace", async () => {
      await put("daily", { limit_usd: 1 });
      const res = await put("lifetime", { limit_usd: 10, include_byok_in_budgets: true });
      expect(res.json().include_byok_in_budgets).toBe(true);
      expect((await get("daily")).json().include_byok_in_budgets).toBe(true);
      expect((await list()).json().include_byok_in_budgets).toBe(true);
      const ws = await t.call({ method: "GET", url: "/api/v1/workspaces/default" });
      expect(ws.json().data.include_byok_in_budgets).toBe(true);

      // Omitted leaves it; false turns it off.
      expect((await put("daily", { limit_usd: 2 })).json().include_byok_in_budgets).toBe(true);
      expect(
        (await put("daily", { limit_usd: 2, include_byok_in_budgets: false })).json().include_byok_in_budgets,
      ).toBe(false);
      expect((await get("lifetime")).json().include_byok_in_budgets).toBe(false);
    });
  });

  describe("spend", () => {
    it("counts workspace usage of the current window, BYOK only when the flag is on, across a week boundary", async () => {
      const keyHash = "a".repeat(64);
      const use = (at: string, usd: number, byokUsd = 0) =>
        t.ctx.store.transaction((trx) =>
          addUsage(trx, {
            organizationId: t.organizationId,
            keyHash,
            workspaceId: t.workspaceId,
            at: new Date(at),
            usageNano: usdToNano(usd),
            byokNano: usdToNano(byokUsd),
          }),
        );
      await put("daily", { limit_usd: 10 });
      await put("weekly", { limit_usd: 20 });
      await put("monthly", { limit_usd: 100 });
      await put("lifetime", { limit_usd: 1000 });

      // Sunday 2026-11-22: the last day of an ISO week.
      t.clock.set("2026-11-22T18:00:00Z");
      await use("2026-11-20T10:00:00Z", 7.5, 1);
      await use("2026-11-22T09:00:00Z", 4.25, 2);
      // Another workspace's spend never counts here.
      await t.ctx.store.transaction((trx) =>
        addUsage(trx, {
          organizationId: t.organizationId,
          keyHash,
          workspaceId: "other-workspace",
          at: new Date("2026-11-22T09:00:00Z"),
          usageNano: usdToNano(500),
          byokNano: 0n,
        }),
      );

      const spend = async () =>
        Object.fromEntries(
          (await list())
            .json()
            .data.map((b: Record<string, unknown>) => [
              (b.reset_interval as string | null) ?? "lifetime",
              [b.spent_usd, b.remaining_usd, b.resets_at],
            ]),
        );
      expect(await spend()).toEqual({
        daily: [4.25, 5.75, "2026-11-23T00:00:00.000Z"],
        weekly: [11.75, 8.25, "2026-11-23T00:00:00.000Z"],
        monthly: [11.75, 88.25, "2026-12-01T00:00:00.000Z"],
        lifetime: [11.75, 988.25, null],
      });

      await put("daily", { limit_usd: 10, include_byok_in_budgets: true });
      expect(await spend()).toEqual({
        daily: [6.25, 3.75, "2026-11-23T00:00:00.000Z"],
        weekly: [14.75, 5.25, "2026-11-23T00:00:00.000Z"],
        monthly: [14.75, 85.25, "2026-12-01T00:00:00.000Z"],
        lifetime: [14.75, 985.25, null],
      });

      // Monday: a new day and a new week; the month and lifetime go on.
      t.clock.set("2026-11-23T00:00:00Z");
      await use("2026-11-23T00:00:00Z", 1);
      expect(await spend()).toEqual({
        daily: [1, 9, "2026-11-24T00:00:00.000Z"],
        weekly: [1, 19, "2026-11-30T00:00:00.000Z"],
        monthly: [15.75, 84.25, "2026-12-01T00:00:00.000Z"],
        lifetime: [15.75, 984.25, null],
      });

      // Overspend: remaining never goes below zero.
      await use("2026-11-23T01:00:00Z", 30);
      const daily = (await get("daily")).json().data;
      expect(daily).toMatchObject({ spent_usd: 31, remaining_usd: 0 });

      await put("daily", { limit_usd: 10, include_byok_in_budgets: false });
      t.clock.set("2026-12-01T00:00:00Z");
      expect(await spend()).toEqual({
        daily: [0, 10, "2026-12-02T00:00:00.000Z"],
        weekly: [0, 20, "2026-12-07T00:00:00.000Z"],
        monthly: [0, 100, "2027-01-01T00:00:00.000Z"],
        lifetime: [42.75, 957.25, null],
      });
    });
  });

  describe("isolation and access", () => {
    it("answers 404 for another organization's workspace by id and by slug, for every operation", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      await t.call({
        method: "PUT",
        url: url("daily", other.workspaceId),
        payload: { limit_usd: 5 },
        auth: other.managementKey,
      });
      for (const ref of [other.workspaceId, "default-other"]) {
        if (ref === "default-other") {
          await t.call({
            method: "PATCH",
            url: `/api/v1/workspaces/${other.workspaceId}`,
            payload: { slug: "default-other" },
            auth: other.managementKey,
          });
        }
        for (const req of [
          { method: "PUT" as const, url: url("daily", ref), payload: { limit_usd: 1 } },
          { method: "GET" as const, url: url("daily", ref) },
          { method: "DELETE" as const, url: url("daily", ref) },
          { method: "GET" as const, url: `/api/v1/workspaces/${ref}/budgets` },
        ]) {
          const res = await t.call(req);
          expect(res.statusCode, `${req.method} ${req.url}`).toBe(404);
        }
      }
      const theirs = await t.call({
        method: "GET",
        url: url("daily", other.workspaceId),
        auth: other.managementKey,
      });
      expect(theirs.json().data.limit_usd).toBe(5);
    });

    it("answers 401 without a valid key and 403 for an ordinary key", async () => {
      const key = newKeyString();
      await insertKey(t.ctx.store.db, {
        hash: hashKey(key),
        label: keyLabel(key),
        organizationId: t.organizationId,
        workspaceId: t.workspaceId,
        name: "ordinary",
        isManagement: false,
        limitNano: null,
        limitReset: null,
        includeByokInLimit: false,
        creatorUserId: null,
        externalUser: null,
        externalKeyHash: null,
        expiresAt: null,
        now: t.clock.now(),
      });
      for (const req of [
        { method: "PUT" as const, url: url("daily"), payload: { limit_usd: 1 } },
        { method: "GET" as const, url: url("daily") },
        { method: "DELETE" as const, url: url("daily") },
        { method: "GET" as const, url: "/api/v1/workspaces/default/budgets" },
      ]) {
        expect((await t.call({ ...req, auth: null })).statusCode).toBe(401);
        expect((await t.call({ ...req, auth: "nope" })).statusCode).toBe(401);
        const res = await t.call({ ...req, auth: key });
        expect(res.statusCode).toBe(403);
        expect(res.json().error.message).toBe("Only management keys can perform this operation");
      }
      expect((await list()).json().data).toEqual([]);
    });

    it("rate-limits with 429", async () => {
      const limited = await makeTestApp({
        config: {
          rateLimit: {
            management: { max: 2, windowMs: 60_000 },
            keyUpdate: { max: 2, windowMs: 60_000 },
            analytics: { max: 2, windowMs: 60_000 },
            ingest: { max: 2, windowMs: 60_000 },
            inference: { max: 2, windowMs: 60_000 },
          },
        },
      });
      try {
        const codes = [];
        for (let i = 0; i < 3; i++) {
          codes.push(
            (await limited.call({ method: "PUT", url: url("daily"), payload: { limit_usd: 1 } })).statusCode,
          );
        }
        expect(codes).toEqual([200, 200, 429]);
      } finally {
        await limited.close();
      }
    });
  });
});
