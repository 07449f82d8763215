import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GuardrailPolicy } from "../../src/domain/guardrails/guardrail-policy.js";
import { loadOrgGuardrails } from "../../src/domain/guardrails/guardrail-repo.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { G, defaultGuardrailOf, newKey, newMember, ok } from "../http/guardrails-helpers.js";

/**
 * What the request path reads is what the API stored (docs/guardrails.md "Policy cache"):
 * loadOrgGuardrails returns every guardrail as a GuardrailPolicy (the rules exactly as the
 * guardrails service wrote them, the budget in nano-USD) with the organization's key and member
 * assignments, and the policy cache of the instance that made a change sees it on the next read.
 */
describe("loadOrgGuardrails and the policy cache", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it("returns the stored guardrails and assignments as the request path's types", async () => {
    const g = (
      await ok(t, "POST", G, {
        name: "stored",
        limit_usd: 1.5,
        reset_interval: "daily",
        include_byok_in_budgets: true,
        allowed_models: ["MOCK/ECHO"],
        ignored_providers: ["Mock"],
        allowed_data_regions: ["us"],
        enforce_zdr: true,
        enforce_zdr_google: false,
        enable_free_model_training: false,
        content_filters: [{ pattern: "secret-\\d+", action: "block", label: "[S]" }],
        content_filter_builtins: [
          { slug: "ssn", action: "redact" },
          { slug: "regex-prompt-injection", action: "flag" },
        ],
      })
    ).data;
    const dflt = await defaultGuardrailOf(t, t.workspaceId);
    await ok(t, "PATCH", `${G}/${dflt}`, { allowed_providers: ["mock"] });
    const key = await newKey(t, "loaded");
    const member = await newMember(t, "loaded@example.com");
    await ok(t, "POST", `${G}/${g.id}/assignments/keys`, { key_hashes: [key] });
    await ok(t, "POST", `${G}/${g.id}/assignments/members`, { member_user_ids: [member] });

    const org = await loadOrgGuardrails(t.ctx.store.db, t.organizationId);
    const expected: GuardrailPolicy = {
      id: g.id,
      organizationId: t.organizationId,
      workspaceId: t.workspaceId,
      name: "stored",
      isDefault: false,
      limitNano: 1_500_000_000n,
      resetInterval: "daily",
      includeByokInBudgets: true,
      rules: {
        allowedModels: ["mock/echo"],
        ignoredModels: null,
        allowedProviders: null,
        ignoredProviders: ["mock"],
        allowedDataRegions: ["us"],
        enforceZdr: true,
        enforceZdrGroups: { anthropic: true, openai: true, google: false, xai: true, other: true },
        enableFreeModelPublication: null,
        enableFreeModelTraining: false,
        enablePaidModelTraining: null,
        contentFilters: [{ pattern: "secret-\\d+", action: "block", label: "[S]" }],
        contentFilterBuiltins: [
          { slug: "ssn", action: "redact", scanScope: null },
          { slug: "regex-prompt-injection", action: "flag", scanScope: null },
        ],
      },
    };
    expect(org.byId.get(g.id)).toEqual(expected);
    expect(org.byId.get(dflt)).toMatchObject({
      isDefault: true,
      workspaceId: t.workspaceId,
      limitNano: null,
      rules: { allowedProviders: ["mock"], allowedModels: null },
    });
    expect([...org.byId.keys()].sort()).toEqual([g.id, dflt].sort());
    expect(Object.fromEntries(org.keyAssignments)).toEqual({ [key]: g.id });
    expect(Object.fromEntries(org.memberAssignments)).toEqual({ [member]: g.id });
    // The policy cache holds the same.
    expect(await t.ctx.policy.guardrails(t.organizationId)).toEqual(org);
  });

  it("the cache of the instance that changed a guardrail or an assignment sees it on the next read", async () => {
    const g = (await ok(t, "POST", G, { name: "cached" })).data.id as string;
    const key = await newKey(t, "cached");
    const before = await t.ctx.policy.guardrails(t.organizationId);
    expect(before.byId.has(g)).toBe(true);
    expect(before.keyAssignments.has(key)).toBe(false);
    // Read again: served from the cache (the same object) until something changes.
    expect(await t.ctx.policy.guardrails(t.organizationId)).toBe(before);

    await ok(t, "POST", `${G}/${g}/assignments/keys`, { key_hashes: [key] });
    expect((await t.ctx.policy.guardrails(t.organizationId)).keyAssignments.get(key)).toBe(g);

    await ok(t, "PATCH", `${G}/${g}`, { allowed_models: ["mock/echo"] });
    expect((await t.ctx.policy.guardrails(t.organizationId)).byId.get(g)?.rules.allowedModels).toEqual([
      "mock/echo",
    ]);

    await ok(t, "DELETE", `/api/v1/keys/${key}`);
    expect((await t.ctx.policy.guardrails(t.organizationId)).keyAssignments.has(key)).toBe(false);

    await ok(t, "DELETE", `${G}/${g}`);
    expect((await t.ctx.policy.guardrails(t.organizationId)).byId.has(g)).toBe(false);
  });
});
