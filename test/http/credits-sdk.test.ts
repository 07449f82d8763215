import type { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { hashKey } from "../../src/lib/ids.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { cliStoreTargets, type CliInstallation } from "../helpers/cli-targets.js";
import { gatehouse } from "../helpers/cli.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * GET /api/v1/credits through @openrouter/sdk's credits.getCredits against a listening server,
 * with the credit line set by the `gatehouse org credit-line` command on the same store
 * (docs/api-notes.md "Credits"): total_usage is the organization's lifetime usage from the
 * ledger (what its keys' `usage` add up to, BYOK apart, deleted keys included), total_credits the
 * credit line, or when unset the sum of the live ordinary keys' lifetime limits.
 */

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

for (const target of cliStoreTargets("gh-credits-")) {
  describe.skipIf(target.skip)(`GET /credits on ${target.name}`, () => {
    let installation: CliInstallation;
    let store: RecordStore;
    let s: ListeningApp;
    let admin: OpenRouter;
    /** Ordinary keys of the first organization, by what their limit is. */
    const keys: Record<"lifetime" | "daily" | "unlimited" | "disabled" | "doomed", string> = {
      lifetime: "",
      daily: "",
      unlimited: "",
      disabled: "",
      doomed: "",
    };
    let other: { organizationId: string; managementKey: string };
    let otherKey: string;
    /** The cost each chat answered, per organization. */
    const costs = { first: [] as number[], other: [] as number[] };

    const createKey = async (managementKey: string, body: Record<string, unknown>): Promise<string> => {
      const r = await fetch(`${s.baseUrl}/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(r.status).toBe(201);
      return ((await r.json()) as { key: string }).key;
    };
    const spend = async (key: string, into: number[], content: string): Promise<void> => {
      const a = await chat(s, key, { model: "mock/echo", messages: [{ role: "user", content }] });
      expect(a.status).toBe(200);
      expect(a.cost).toBeGreaterThan(0);
      into.push(a.cost!);
    };
    /** `usage` of every listed ordinary key of the first organization's default workspace. */
    const listedUsage = async (): Promise<number> => {
      const page = await admin.apiKeys.list({ includeDisabled: true });
      return sum(page.data.map((k) => k.usage));
    };
    const credits = async (sdk: OpenRouter = admin) => (await sdk.credits.getCredits()).data;

    beforeAll(async () => {
      installation = await target.setup();
      store = await installation.open();
      s = await startListening({ store });
      admin = s.sdk();
      keys.lifetime = await createKey(s.key, { name: "lifetime", limit: 10 });
      keys.daily = await createKey(s.key, { name: "daily", limit: 5, limit_reset: "daily" });
      keys.unlimited = await createKey(s.key, { name: "unlimited" });
      keys.disabled = await createKey(s.key, { name: "disabled", limit: 3 });
      keys.doomed = await createKey(s.key, { name: "doomed", limit: 2 });
      const disable = await fetch(`${s.baseUrl}/keys/${hashKey(keys.disabled)}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
        body: JSON.stringify({ disabled: true }),
      });
      expect(disable.status).toBe(200);
      // Created later, so the test app's organization stays the first (the CLI's default).
      s.clock.advance(1_000);
      const created = await createOrganization(store, s.clock, "Other");
      other = { organizationId: created.organizationId, managementKey: created.managementKey };
      otherKey = await createKey(other.managementKey, { name: "other's", limit: 100 });
    });
    afterAll(async () => {
      await s?.close();
      await store?.close();
      await installation?.cleanup();
    });

    it("a fresh organization: the SDK parses {data: {total_credits, total_usage}}, both 0", async () => {
      const r = await fetch(`${s.baseUrl}/credits`, {
        headers: { authorization: `Bearer ${other.managementKey}` },
      });
      expect(r.status).toBe(200);
      // Exactly the two numbers the SDK requires, nothing beside `data`.
      expect(await r.json()).toEqual({ data: { total_credits: 100, total_usage: 0 } });
      expect(await credits(s.sdk(other.managementKey))).toEqual({ totalCredits: 100, totalUsage: 0 });
    });

    it("total_usage is the sum of the keys' usage after chats, and of the costs the chats answered", async () => {
      await spend(keys.lifetime, costs.first, "one");
      await spend(keys.lifetime, costs.first, "two words");
      await spend(keys.daily, costs.first, "three little words");
      await spend(keys.unlimited, costs.first, "four");
      await spend(otherKey, costs.other, "another organization's spend, not ours");
      const c = await credits();
      expect(c.totalUsage).toBeGreaterThan(0);
      expect(c.totalUsage).toBeCloseTo(await listedUsage(), 12);
      expect(c.totalUsage).toBeCloseTo(sum(costs.first), 12);
      // The other organization's own total holds its chat only.
      expect((await credits(s.sdk(other.managementKey))).totalUsage).toBeCloseTo(sum(costs.other), 12);
    });

    it("BYOK usage is not counted (as a key's `usage` leaves it out); ingested usage is", async () => {
      const before = await credits();
      const r = await fetch(`${s.baseUrl}/activity/generations`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
        body: JSON.stringify({
          generations: [
            {
              id: "gen-credits-byok",
              created_at: "2026-11-18T11:00:00Z",
              api_key_hash: hashKey(keys.unlimited),
              model: "openai/gpt-4o",
              provider: "OpenAI",
              tokens_prompt: 1000,
              tokens_completion: 200,
              usage: 0.25,
              byok_usage_inference: 0.5,
              latency_ms: 120,
            },
          ],
        }),
      });
      expect(r.status).toBe(200);
      const after = await credits();
      expect(after.totalUsage - before.totalUsage).toBeCloseTo(0.25, 12);
      expect(after.totalUsage).toBeCloseTo(await listedUsage(), 12);
      const unlimited = await s.sdk(keys.unlimited).apiKeys.getCurrentKeyMetadata();
      expect(unlimited.data.byokUsage).toBeCloseTo(0.5, 12);
      costs.first.push(0.25);
    });

    it("no credit line: total_credits is the sum of the live ordinary keys' lifetime limits", async () => {
      // lifetime 10 + disabled 3 + doomed 2; the daily limit, the unlimited key, the management
      // key and the other organization's key (100) add nothing.
      expect((await credits()).totalCredits).toBe(15);
      // Spend of a key stays in total_usage after the key is deleted; its limit leaves total_credits.
      await spend(keys.doomed, costs.first, "spent before deletion");
      const doomedUsage = (await s.sdk(keys.doomed).apiKeys.getCurrentKeyMetadata()).data.usage;
      const del = await fetch(`${s.baseUrl}/keys/${hashKey(keys.doomed)}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${s.key}` },
      });
      expect(del.status).toBe(200);
      const c = await credits();
      expect(c.totalCredits).toBe(13);
      expect(c.totalUsage).toBeCloseTo(sum(costs.first), 12);
      expect(c.totalUsage).toBeCloseTo((await listedUsage()) + doomedUsage, 12);
      // A lifetime limit changed to a daily one leaves the sum.
      const patch = await fetch(`${s.baseUrl}/keys/${hashKey(keys.disabled)}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
        body: JSON.stringify({ limit_reset: "daily" }),
      });
      expect(patch.status).toBe(200);
      expect((await credits()).totalCredits).toBe(10);
    });

    it("`gatehouse org credit-line` sets the credit line (default: the first organization), --org another's, none clears", async () => {
      const set = await gatehouse(["org", "credit-line", "250.125", "--json"], installation.env);
      expect(set).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(set.stdout)).toEqual({
        organization_id: s.organizationId,
        name: "Test organization",
        credit_line: 250.125,
      });
      const c = await credits();
      expect(c.totalCredits).toBe(250.125);
      expect(c.totalUsage).toBeCloseTo(sum(costs.first), 12);
      // The other organization keeps its own rule until it gets its own line.
      expect((await credits(s.sdk(other.managementKey))).totalCredits).toBe(100);
      const zero = await gatehouse([
        "org",
        "credit-line",
        "0",
        "--org",
        other.organizationId,
      ], installation.env);
      expect(zero).toMatchObject({ code: 0, stderr: "" });
      expect(zero.stdout).toMatch(/set to 0 USD/);
      expect((await credits(s.sdk(other.managementKey))).totalCredits).toBe(0);
      expect((await credits()).totalCredits).toBe(250.125);

      const cleared = await gatehouse(["org", "credit-line", "none"], installation.env);
      expect(cleared).toMatchObject({ code: 0, stderr: "" });
      expect(cleared.stdout).toMatch(/cleared/);
      expect((await credits()).totalCredits).toBe(10);
      expect((await credits(s.sdk(other.managementKey))).totalCredits).toBe(0);
    });

    it("the command refuses a malformed amount (exit 2) and an unknown organization (exit 1), changing nothing", async () => {
      for (const bad of ["-5", "1e3", "12.5 USD", "0.0000000001", "1000000000.5", ""]) {
        const r = await gatehouse(["org", "credit-line", bad], installation.env);
        expect(r.code, bad).toBe(2);
        expect(r.stderr, bad).toMatch(/USD: /);
      }
      const unknown = await gatehouse([
        "org",
        "credit-line",
        "5",
        "--org",
        "00000000-0000-4000-8000-000000000000",
      ], installation.env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/not found/);
      expect((await credits()).totalCredits).toBe(10);
    });

    it("an ordinary key is refused 403 in the error envelope; a wrong key 401", async () => {
      const r = await fetch(`${s.baseUrl}/credits`, {
        headers: { authorization: `Bearer ${keys.lifetime}` },
      });
      expect(r.status).toBe(403);
      const body = (await r.json()) as { error: { code: number; message: string } };
      expect(body.error.code).toBe(403);
      expect(body.error.message).not.toBe("");
      await expect(s.sdk(keys.lifetime).credits.getCredits()).rejects.toMatchObject({
        name: "ForbiddenResponseError",
        statusCode: 403,
      });
      await expect(s.sdk("sk-gh-v1-not-a-key").credits.getCredits()).rejects.toMatchObject({
        name: "UnauthorizedResponseError",
        statusCode: 401,
      });
    });
  });
}
