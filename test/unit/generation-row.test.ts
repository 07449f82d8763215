import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkRecords,
  normaliseBatch,
  type KeyRef,
} from "../../src/domain/ingest/records/normalise-batch.js";
import { activityRowOf, servedBatch } from "../../src/gateway/recording/generation-row.js";
import { generationRecord } from "../../src/gateway/recording/record-generation.js";
import type { ServedGeneration } from "../../src/gateway/recording/served-generation.js";
import { servedGeneration } from "../helpers/recording.js";

const ORG = "11111111-1111-4111-8111-111111111111";
const WORKSPACE = "22222222-2222-4222-8222-222222222222";
const HASH = "a".repeat(64);

const keyOf = (creatorUserId: string | null): ServedGeneration["key"] => ({
  id: 42,
  hash: HASH,
  organizationId: ORG,
  workspaceId: WORKSPACE,
  creatorUserId,
});

/** What ingest's validator makes of the same generation sent as a wire record. */
function validatedRow(g: ServedGeneration) {
  const checked = checkRecords({ format: "records", records: [generationRecord(g)] }, Date.now());
  const key: KeyRef = { id: g.key.id, workspaceId: g.key.workspaceId, creatorUserId: g.key.creatorUserId };
  const batch = normaliseBatch(checked, ORG, {
    keys: new Map([[g.key.hash, key]]),
    workspaces: new Set(),
    legacyWorkspace: null,
  });
  const l = batch.labelSource.get(g.id);
  return {
    row: batch.rows[0],
    labels: l && { appTitle: l.appTitle, userName: l.userName, userEmail: l.userEmail },
    tags: batch.tagsById.get(g.id) ?? [],
  };
}

/** Texts a client or an upstream may choose: control characters, surrogate pairs, long ones. */
const clientText = fc.option(
  fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.string({ unit: "grapheme", minLength: 1000, maxLength: 1100 }),
    fc.constantFrom("a\tb", "line\nbreak", "😀".repeat(600), "x".repeat(1023) + "😀"),
  ),
  { nil: null },
);

describe("the gateway's stored row (no wire JSON in between)", () => {
  it("is the row ingest's validator makes of the same generation, for any texts, counts and money", () => {
    fc.assert(
      fc.property(
        fc.record({
          appTitle: clientText,
          referer: clientText,
          externalUser: clientText,
          finishReason: clientText,
          creator: fc.option(fc.constantFrom("user_1", "user-two"), { nil: null }),
          promptTokens: fc.nat({ max: 2_000_000 }),
          completionTokens: fc.nat({ max: 200_000 }),
          cachedTokens: fc.nat({ max: 1000 }),
          reasoningTokens: fc.nat({ max: 1000 }),
          costNano: fc.bigInt({ min: 0n, max: 10n ** 15n }),
          byokCostNano: fc.bigInt({ min: 0n, max: 10n ** 12n }),
          cacheCostNano: fc.bigInt({ min: 0n, max: 10n ** 12n }),
          isByok: fc.boolean(),
          streamed: fc.boolean(),
          cancelled: fc.boolean(),
          latencyMs: fc.nat({ max: 600_000 }),
          generationTimeMs: fc.nat({ max: 600_000 }),
          guardrail: fc.option(
            fc.record({
              invoked: fc.boolean(),
              flags: fc.array(fc.constantFrom("[EMAIL]", "[CREDIT_CARD]", "Customer id", "x".repeat(300)), {
                maxLength: 4,
              }),
            }),
            { nil: undefined },
          ),
        }),
        (v) => {
          const g = servedGeneration(keyOf(v.creator), {
            appTitle: v.appTitle,
            referer: v.referer,
            externalUser: v.externalUser,
            finishReason: v.finishReason,
            promptTokens: v.promptTokens,
            completionTokens: v.completionTokens,
            cachedTokens: v.cachedTokens,
            reasoningTokens: v.reasoningTokens,
            costNano: v.costNano,
            byokCostNano: v.byokCostNano,
            cacheCostNano: v.cacheCostNano,
            isByok: v.isByok,
            streamed: v.streamed,
            cancelled: v.cancelled,
            latencyMs: v.latencyMs,
            generationTimeMs: v.generationTimeMs,
            ...(v.guardrail ? { guardrail: v.guardrail } : {}),
          });
          const validated = validatedRow(g);
          expect(activityRowOf(g)).toEqual(validated.row);
          // Guardrail flags: the same classifier tags either way.
          expect(servedBatch(ORG, [g]).tagsById.get(g.id) ?? []).toEqual(validated.tags);
          expect(servedBatch(ORG, [g]).labelSource.get(g.id)).toEqual(validated.labels);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps money in nano-USD: no float in between (a USD float would lose the last digits)", () => {
    const g = servedGeneration(keyOf(null), { costNano: 123_456_789_012_345_678n });
    expect(activityRowOf(g).usage_nano).toBe(123_456_789_012_345_678n);
  });

  it("keeps the first of a repeated id, counts both as received, and refuses another organization's", () => {
    const g = servedGeneration(keyOf(null));
    const batch = servedBatch(ORG, [g, { ...g, costNano: 1n }]);
    expect(batch.received).toBe(2);
    expect(batch.rows.map((r) => r.usage_nano)).toEqual([g.costNano]);
    const other = servedGeneration({ ...keyOf(null), organizationId: WORKSPACE });
    expect(() => servedBatch(ORG, [other])).toThrow(/another organization/);
  });
});
