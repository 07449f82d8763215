import { contextLengthBucket, throughputOf, type ActivityRow } from "../../activity/activity-row.js";
import type { Batch, RowLabels } from "../../domain/ingest/records/normalise-batch.js";
import type { KeyRef } from "../../domain/ingest/records/normalise-batch.js";
import { appIdOf, cut, type ServedGeneration } from "./served-generation.js";
import type { ClassificationRow } from "../../activity/activity-row.js";
import { flagTags } from "../../domain/guardrails/guardrail-flags.js";

/** An optional text column as ingest stores it: cut (`cut`), and "" is absent (null). */
const optional = (s: string | null, max?: number): string | null => {
  const t = cut(s, max);
  return t === "" ? null : t;
};

/**
 * The stored row of a served generation, built from the gateway's typed record: no wire JSON, no
 * validation, money kept in nano-USD. Every value is one the gateway made itself or bounded
 * (`cut`), so the row holds what ingest's validator would have made of the same record
 * (test/gateway/generation-row.test.ts compares the two); a column the gateway has no value for
 * takes the field table's default (src/activity/generation-fields.ts).
 */
export function activityRowOf(g: ServedGeneration): ActivityRow {
  checkServed(g);
  return {
    organization_id: g.key.organizationId,
    id: g.id,
    created_at_ms: g.createdAt.getTime(),
    api_key_id: g.key.id,
    api_key_hash: g.key.hash,
    workspace_id: g.key.workspaceId,
    model: g.model,
    provider: g.provider,
    variant: null,
    app_id: appIdOf(g.referer, g.appTitle),
    // user_id absent: the key's creator (the field table's `key-creator` default).
    user_id: g.key.creatorUserId,
    external_user: optional(g.externalUser),
    origin: optional(g.referer),
    country: null,
    finish_reason: optional(g.finishReason, 64),
    api: g.api,
    context_length_bucket: contextLengthBucket(g.promptTokens),
    tokens_prompt: g.promptTokens,
    tokens_completion: g.completionTokens,
    tokens_reasoning: g.reasoningTokens,
    tokens_cached: g.cachedTokens,
    is_byok: g.isByok,
    streamed: g.streamed,
    cancelled: g.cancelled,
    response_cached: false,
    guardrail_invoked: g.guardrail?.invoked === true,
    usage_nano: g.costNano,
    byok_usage_inference_nano: g.byokCostNano,
    usage_upstream_nano: 0n,
    usage_cache_nano: g.cacheCostNano,
    usage_data_nano: 0n,
    usage_web_nano: 0n,
    usage_upstream_web_nano: 0n,
    usage_file_nano: 0n,
    usage_upstream_file_nano: 0n,
    usage_web_fetch_nano: 0n,
    usage_upstream_web_fetch_nano: 0n,
    latency_ms: g.latencyMs,
    generation_time_ms: g.generationTimeMs,
    throughput: throughputOf(g.completionTokens, g.generationTimeMs),
  };
}

const count = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
const millis = (n: number): boolean => Number.isFinite(n) && n >= 0;

/**
 * The gateway's own invariants, checked where its record becomes a row (a few comparisons): a
 * count or an amount out of range is a bug upstream of here, and stored it would corrupt the
 * ledger and analytics. Throws (naming the column) so that the recorder fails that generation
 * alone (generation-recorder.ts retries a failed batch record by record).
 */
function checkServed(g: ServedGeneration): void {
  const bad =
    (!count(g.promptTokens) && "tokens_prompt") ||
    (!count(g.completionTokens) && "tokens_completion") ||
    (!count(g.cachedTokens) && "tokens_cached") ||
    (!count(g.reasoningTokens) && "tokens_reasoning") ||
    (g.costNano < 0n && "usage") ||
    (g.byokCostNano < 0n && "byok_usage_inference") ||
    (g.cacheCostNano < 0n && "usage_cache") ||
    (!millis(g.latencyMs) && "latency_ms") ||
    (!millis(g.generationTimeMs) && "generation_time_ms") ||
    (Number.isNaN(g.createdAt.getTime()) && "created_at");
  if (bad) throw new Error(`recording: generation ${g.id}: ${bad} out of range`);
}

/** One organization's served generations as a batch for ingest's acceptance (ingestRows). */
export function servedBatch(organizationId: string, gs: readonly ServedGeneration[]): Batch {
  const rows: ActivityRow[] = [];
  const labelSource = new Map<string, RowLabels>();
  const keys = new Map<string, KeyRef>();
  const tagsById = new Map<string, ClassificationRow[]>();
  for (const g of gs) {
    if (g.key.organizationId !== organizationId) {
      throw new Error(`recording: generation ${g.id} belongs to another organization`);
    }
    // A repeated id keeps its first record, as in ingest.
    if (labelSource.has(g.id)) continue;
    labelSource.set(g.id, { appTitle: optional(g.appTitle), userName: null, userEmail: null });
    keys.set(g.key.hash, {
      id: g.key.id,
      workspaceId: g.key.workspaceId,
      creatorUserId: g.key.creatorUserId,
    });
    const row = activityRowOf(g);
    rows.push(row);
    if (g.guardrail && g.guardrail.flags.length > 0) {
      tagsById.set(
        g.id,
        flagTags(g.guardrail.flags).map((t) => ({
          organization_id: organizationId,
          generation_id: g.id,
          workspace_id: row.workspace_id,
          created_at_ms: row.created_at_ms,
          ...t,
        })),
      );
    }
  }
  return {
    organizationId,
    received: gs.length,
    rows,
    tagsById,
    labelSource,
    keys,
    legacyWorkspace: null,
  };
}
