import { describe, expect, it } from "vitest";
import { governingGuardrails, indexGuardrails, type Guardrail } from "../../web/src/api/guardrails.js";
import { budgetText, guardrailTitle, rulesSummary } from "../../web/src/lib/guardrail-summary.js";

/**
 * The dashboard's reading of guardrails: which govern a key (the Keys page's column, in the order
 * the gateway combines them: guardrailsOfKey in src/domain/guardrails/guardrail-policy.ts) and the
 * words a guardrail's rules are shown in.
 */
const empty: Omit<Guardrail, "id" | "name" | "workspace_id" | "is_default"> = {
  description: null,
  limit_usd: null,
  reset_interval: null,
  include_byok_in_budgets: false,
  allowed_models: null,
  ignored_models: null,
  allowed_providers: null,
  ignored_providers: null,
  allowed_data_regions: null,
  enforce_zdr: null,
  enforce_zdr_anthropic: null,
  enforce_zdr_openai: null,
  enforce_zdr_google: null,
  enforce_zdr_xai: null,
  enforce_zdr_other: null,
  enable_free_model_publication: null,
  enable_free_model_training: null,
  enable_paid_model_training: null,
  content_filters: null,
  content_filter_builtins: null,
  created_at: "2030-01-01T00:00:00.000Z",
  updated_at: null,
};
const guardrail = (id: string, over: Partial<Guardrail> = {}): Guardrail => ({
  ...empty,
  id,
  name: id,
  workspace_id: "ws-1",
  is_default: false,
  ...over,
});
const assignment = { id: "a", assigned_by: null, created_at: "2030-01-01T00:00:00.000Z" };
const HASH = "AB".repeat(32);

describe("governingGuardrails", () => {
  const workspaces = [
    { id: "ws-1", default_guardrail_id: "default-1" },
    { id: "ws-2", default_guardrail_id: "default-2" },
  ];
  const index = indexGuardrails(
    [guardrail("default-1", { is_default: true }), guardrail("member-g"), guardrail("key-g")],
    [{ ...assignment, guardrail_id: "key-g", key_hash: HASH.toLowerCase(), key_name: "k", key_label: "l" }],
    [{ ...assignment, guardrail_id: "member-g", user_id: "user_ada", organization_id: "org" }],
  );

  it("lists the workspace default, the creator's and the key's own, outermost first", () => {
    const got = governingGuardrails(
      index,
      { hash: HASH, creator_user_id: "user_ada", workspace_id: "ws-1" },
      workspaces,
    );
    expect(got.map((g) => [g.guardrail.id, g.via])).toEqual([
      ["default-1", "workspace"],
      ["member-g", "member"],
      ["key-g", "key"],
    ]);
  });

  it("leaves out an unstored default, a creator without a guardrail and an unassigned key", () => {
    expect(
      governingGuardrails(
        index,
        { hash: "cd".repeat(32), creator_user_id: "user_bob", workspace_id: "ws-2" },
        workspaces,
      ),
    ).toEqual([]);
    expect(
      governingGuardrails(
        index,
        { hash: "cd".repeat(32), creator_user_id: null, workspace_id: "ws-unknown" },
        workspaces,
      ),
    ).toEqual([]);
  });

  it("ignores an assignment whose guardrail is not in the list (deleted since)", () => {
    const stale = indexGuardrails(
      [],
      [{ ...assignment, guardrail_id: "gone", key_hash: HASH, key_name: "k", key_label: "l" }],
      [],
    );
    expect(
      governingGuardrails(stale, { hash: HASH, creator_user_id: null, workspace_id: "ws-1" }, workspaces),
    ).toEqual([]);
  });
});

describe("guardrail summary", () => {
  it("says nothing of a guardrail without rules, and that it has no budget", () => {
    expect(rulesSummary(guardrail("g"))).toEqual([]);
    expect(budgetText(guardrail("g"))).toBe("no budget");
  });

  it("names every kind of rule", () => {
    const g = guardrail("g", {
      limit_usd: 25,
      reset_interval: "daily",
      include_byok_in_budgets: true,
      allowed_models: ["openai/gpt-4o-mini"],
      ignored_providers: ["azure"],
      allowed_data_regions: ["europe"],
      enforce_zdr_openai: true,
      enforce_zdr_google: false,
      enable_free_model_training: false,
      content_filters: [{ pattern: "x+y", action: "block", label: null }],
      content_filter_builtins: [{ slug: "email", action: "redact", label: "[EMAIL]" }],
    });
    expect(budgetText(g)).toBe("$25.00 daily (BYOK counted)");
    expect(rulesSummary(g)).toEqual([
      "models: openai/gpt-4o-mini",
      "never providers: azure",
      "regions: europe",
      "zero data retention: openai",
      "free models whose endpoints train on data: not allowed",
      "1 custom filter (unlabelled: block)",
      "detectors: email (redact)",
    ]);
  });

  it("calls a workspace's default guardrail so until it is renamed", () => {
    const id = "0d6c2b1e-5f7a-5b3c-9d2e-1f0a9b8c7d6e";
    expect(guardrailTitle(guardrail(id, { is_default: true, name: `Workspace ${id} Default` }))).toBe(
      "Workspace default",
    );
    expect(guardrailTitle(guardrail(id, { is_default: true, name: "EU only" }))).toBe("EU only");
    // A guardrail of one's own may be named like that: it keeps its name.
    expect(guardrailTitle(guardrail(id, { name: `Workspace ${id} Default` }))).toBe(
      `Workspace ${id} Default`,
    );
  });
});
