import { describe, expect, it } from "vitest";
import {
  allows,
  allowsModel,
  combineGuardrails,
  isEmpty,
  NO_EFFECTIVE_GUARDRAILS,
  zdrGroupOf,
  type Candidate,
  type GuardrailPart,
} from "../../../src/gateway/guardrails/combine.js";
import { guardrail } from "./policies.js";

/** The combination rules (surfaces-facts §4.4), one row each, and the refusals `allows` gives. */

const ws = (
  rules: Parameters<typeof guardrail>[1],
  budget?: Parameters<typeof guardrail>[2],
): GuardrailPart => ({
  guardrail: guardrail("ws", rules, budget),
  via: "workspace",
});
const member = (
  rules: Parameters<typeof guardrail>[1],
  budget?: Parameters<typeof guardrail>[2],
): GuardrailPart => ({
  guardrail: guardrail("member", rules, budget),
  via: "member",
});
const key = (
  rules: Parameters<typeof guardrail>[1],
  budget?: Parameters<typeof guardrail>[2],
): GuardrailPart => ({
  guardrail: guardrail("key", rules, budget),
  via: "key",
});

const candidate = (c: Partial<Candidate> = {}): Candidate => ({
  modelId: "openai/gpt-4o",
  providerSlug: "openai",
  providerRegion: "us",
  providerZdr: false,
  ...c,
});

interface Row {
  rule: string;
  parts: GuardrailPart[];
  candidate: Partial<Candidate>;
  refused: { guardrailId: string; rule: string; subject: string } | null;
}

const ROWS: Row[] = [
  {
    rule: "allowed_models intersect: allowed by both",
    parts: [
      ws({ allowedModels: ["openai/gpt-4o", "openai/gpt-4o-mini"] }),
      key({ allowedModels: ["openai/gpt-4o"] }),
    ],
    candidate: {},
    refused: null,
  },
  {
    rule: "allowed_models intersect: one part's list lacks it",
    parts: [
      ws({ allowedModels: ["openai/gpt-4o", "openai/gpt-4o-mini"] }),
      key({ allowedModels: ["openai/gpt-4o"] }),
    ],
    candidate: { modelId: "openai/gpt-4o-mini" },
    refused: { guardrailId: "key", rule: "allowed_models", subject: "openai/gpt-4o-mini" },
  },
  {
    rule: "allowed_models: ids compared exactly (no prefix, no case folding)",
    parts: [ws({ allowedModels: ["openai/gpt-4o"] })],
    candidate: { modelId: "OpenAI/gpt-4o" },
    refused: { guardrailId: "ws", rule: "allowed_models", subject: "OpenAI/gpt-4o" },
  },
  {
    rule: "ignored_models union",
    parts: [ws({ ignoredModels: ["openai/o1"] }), member({ ignoredModels: ["openai/gpt-4o"] })],
    candidate: {},
    refused: { guardrailId: "member", rule: "ignored_models", subject: "openai/gpt-4o" },
  },
  {
    rule: "allowed_providers intersect",
    parts: [ws({ allowedProviders: ["openai", "azure"] }), member({ allowedProviders: ["azure"] })],
    candidate: {},
    refused: { guardrailId: "member", rule: "allowed_providers", subject: "openai" },
  },
  {
    rule: "ignored_providers union",
    parts: [ws({ ignoredProviders: ["azure"] }), key({ ignoredProviders: ["openai"] })],
    candidate: {},
    refused: { guardrailId: "key", rule: "ignored_providers", subject: "openai" },
  },
  {
    rule: "allowed_data_regions intersect",
    parts: [ws({ allowedDataRegions: ["us", "europe"] }), key({ allowedDataRegions: ["europe"] })],
    candidate: { providerRegion: "us" },
    refused: { guardrailId: "key", rule: "allowed_data_regions", subject: "us" },
  },
  {
    rule: "allowed_data_regions: an endpoint of unknown region is refused",
    parts: [ws({ allowedDataRegions: ["us", "europe", "global"] })],
    candidate: { providerRegion: null },
    refused: { guardrailId: "ws", rule: "allowed_data_regions", subject: "unknown" },
  },
  {
    rule: "enforce_zdr ORed per group: one part enforcing is enough",
    parts: [
      ws({}),
      member({ enforceZdrGroups: { anthropic: null, openai: true, google: null, xai: null, other: null } }),
    ],
    candidate: { providerZdr: false },
    refused: { guardrailId: "member", rule: "enforce_zdr_openai", subject: "openai" },
  },
  {
    rule: "enforce_zdr: a zero-retention endpoint passes",
    parts: [ws({ enforceZdr: true })],
    candidate: { providerZdr: true },
    refused: null,
  },
  {
    rule: "enforce_zdr: an endpoint of unknown retention is refused",
    parts: [ws({ enforceZdr: true })],
    candidate: { providerZdr: null },
    refused: { guardrailId: "ws", rule: "enforce_zdr_openai", subject: "openai" },
  },
  {
    rule: "enforce_zdr: the deprecated flag fills a group's null flag",
    parts: [
      key({
        enforceZdr: true,
        enforceZdrGroups: { anthropic: false, openai: null, google: null, xai: null, other: null },
      }),
    ],
    candidate: { modelId: "google/gemini-2.5-pro", providerSlug: "google-vertex" },
    refused: { guardrailId: "key", rule: "enforce_zdr_google", subject: "google-vertex" },
  },
  {
    rule: "enforce_zdr: a group's own false is not overridden by the deprecated flag",
    parts: [
      key({
        enforceZdr: true,
        enforceZdrGroups: { anthropic: false, openai: null, google: null, xai: null, other: null },
      }),
    ],
    candidate: { modelId: "anthropic/claude-sonnet-4", providerSlug: "anthropic" },
    refused: null,
  },
  {
    rule: "enforce_zdr: the model group may be given",
    parts: [
      ws({ enforceZdrGroups: { anthropic: null, openai: null, google: null, xai: true, other: null } }),
    ],
    candidate: { modelId: "custom/grok-proxy", modelGroup: "xai" },
    refused: { guardrailId: "ws", rule: "enforce_zdr_xai", subject: "openai" },
  },
  {
    rule: "model rules come before provider rules",
    parts: [ws({ allowedModels: ["openai/o1"], allowedProviders: ["azure"] })],
    candidate: {},
    refused: { guardrailId: "ws", rule: "allowed_models", subject: "openai/gpt-4o" },
  },
  {
    rule: "an empty allowlist allows nothing",
    parts: [ws({ allowedProviders: [] })],
    candidate: {},
    refused: { guardrailId: "ws", rule: "allowed_providers", subject: "openai" },
  },
];

describe("combineGuardrails and allows: the combination rules", () => {
  for (const row of ROWS) {
    it(row.rule, () => {
      const r = allows(combineGuardrails(row.parts), candidate(row.candidate));
      if (row.refused === null) expect(r).toBeNull();
      else expect(r).toEqual({ ...row.refused, guardrailName: `Guardrail ${row.refused.guardrailId}` });
    });
  }

  it("no guardrails: the shared no-op policy, which allows anything", () => {
    const e = combineGuardrails([]);
    expect(e).toBe(NO_EFFECTIVE_GUARDRAILS);
    expect(isEmpty(e)).toBe(true);
    expect(allows(e, candidate())).toBeNull();
  });

  it("a guardrail that restricts nothing combines into an empty policy", () => {
    expect(isEmpty(combineGuardrails([ws({}), key({})]))).toBe(true);
    expect(isEmpty(combineGuardrails([ws({ ignoredModels: ["x/y"] })]))).toBe(false);
    expect(isEmpty(combineGuardrails([ws({}, { limitNano: 1n, resetInterval: "daily" })]))).toBe(false);
  });

  it("allowsModel answers for the model alone (the fallback list's filter)", () => {
    const e = combineGuardrails([ws({ allowedModels: ["a/1", "a/2"] }), key({ ignoredModels: ["a/2"] })]);
    expect(allowsModel(e, "a/1")).toBeNull();
    expect(allowsModel(e, "a/2")?.rule).toBe("ignored_models");
    expect(allowsModel(e, "a/3")?.rule).toBe("allowed_models");
    expect([...e.allowedModels!.intersection]).toEqual(["a/1", "a/2"]);
  });

  it("the data-use permissions are forbidden when any part sets them false", () => {
    const e = combineGuardrails([
      ws({ enableFreeModelTraining: true, enablePaidModelTraining: false }),
      key({ enableFreeModelTraining: false, enableFreeModelPublication: true }),
    ]);
    expect(e.forbids.freeModelTraining?.guardrailId).toBe("key");
    expect(e.forbids.paidModelTraining?.guardrailId).toBe("ws");
    expect(e.forbids.freeModelPublication).toBeNull();
  });

  it("combines once per set of policy objects: the same parts give the same result object", () => {
    const parts = [ws({ allowedModels: ["a/1"] }), key({ ignoredModels: ["a/2"] })];
    const first = combineGuardrails(parts);
    expect(combineGuardrails([...parts])).toBe(first);
    expect(combineGuardrails([parts[1]!, parts[0]!])).not.toBe(first);
    expect(combineGuardrails([{ guardrail: parts[0]!.guardrail, via: "key" }, parts[1]!])).not.toBe(first);
  });
});

describe("combineGuardrails: budgets", () => {
  it("each budget kept on its own; workspace and key guardrails held per key, member ones per member", () => {
    const e = combineGuardrails([
      ws({}, { limitNano: 5_000_000_000n, resetInterval: "monthly" }),
      member({}, { limitNano: 2_000_000_000n, resetInterval: "weekly", includeByokInBudgets: true }),
      key({}, { limitNano: 1_000_000_000n, resetInterval: "daily" }),
    ]);
    expect(e.budgets).toEqual([
      {
        guardrailId: "ws",
        name: "Guardrail ws",
        holder: "key",
        limitNano: 5_000_000_000n,
        interval: "monthly",
        includeByok: false,
      },
      {
        guardrailId: "member",
        name: "Guardrail member",
        holder: "member",
        limitNano: 2_000_000_000n,
        interval: "weekly",
        includeByok: true,
      },
      {
        guardrailId: "key",
        name: "Guardrail key",
        holder: "key",
        limitNano: 1_000_000_000n,
        interval: "daily",
        includeByok: false,
      },
    ]);
  });

  it("a guardrail without both a limit and an interval has no budget", () => {
    expect(combineGuardrails([ws({}, { limitNano: 5n })]).budgets).toEqual([]);
  });

  it("one guardrail reaching a key twice: one budget per holder", () => {
    const g = guardrail("g", {}, { limitNano: 10n, resetInterval: "daily" });
    const e = combineGuardrails([
      { guardrail: g, via: "member" },
      { guardrail: g, via: "key" },
    ]);
    expect(e.budgets.map((b) => b.holder)).toEqual(["member", "key"]);
  });
});

describe("zdrGroupOf", () => {
  it.each([
    ["anthropic/claude-sonnet-4", "anthropic"],
    ["openai/gpt-4o", "openai"],
    ["google/gemini-2.5-pro", "google"],
    ["x-ai/grok-4", "xai"],
    ["meta-llama/llama-3.3-70b", "other"],
    ["openai", "other"],
    ["", "other"],
  ])("%s → %s", (model, group) => expect(zdrGroupOf(model)).toBe(group));
});
