import type { BroadcastGeneration } from "./encoders/encoder.js";
import type { LiveContext } from "./live-context.js";
import type { OutboxRow } from "./payload-rows.js";

/** What a destination's flags ask for (the destination record's booleans). */
export interface GenerationFlags {
  privacyMode: boolean;
  cost: boolean;
  identity: boolean;
  requestContext: boolean;
}

/** A generation offered to destinations: its row, the served content if any, its key's name. */
export interface Candidate {
  row: OutboxRow;
  context: LiveContext | null;
  apiKeyName: string | null;
}

const usd = (nano: bigint): number => Number(nano) / 1e9;

/** Leading characters of the key hash sent with identity (enough to tell keys apart). */
export const KEY_HASH_PREFIX_LENGTH = 12;

/**
 * The BroadcastGeneration a destination receives, field by field from an allowlist
 * (docs/broadcast.md "What is sent"). Nothing else of the record or the request is read: no
 * API key, no full key hash, no BYOK credential and no destination config can reach it.
 */
export function toBroadcastGeneration(c: Candidate, flags: GenerationFlags): BroadcastGeneration {
  const { row, context } = c;
  return {
    id: row.id,
    createdAtMs: row.created_at_ms,
    model: row.model,
    provider: row.provider,
    finishReason: row.finish_reason,
    tokensPrompt: row.tokens_prompt,
    tokensCompletion: row.tokens_completion,
    tokensCached: row.tokens_cached,
    tokensReasoning: row.tokens_reasoning,
    latencyMs: row.latency_ms,
    generationTimeMs: row.generation_time_ms,
    streamed: row.streamed,
    cancelled: row.cancelled,
    isByok: row.is_byok,
    api: row.api,
    params: context?.params ? { ...context.params } : null,
    trace: context?.trace ? { ...context.trace } : null,
    attempts: (context?.attempts ?? []).map((a) => ({
      provider: a.provider,
      model: a.model,
      status: a.status,
      durationMs: a.durationMs,
    })),
    cost: flags.cost
      ? {
          totalUsd: usd(row.usage_nano),
          promptUsd: context?.promptCostUsd ?? null,
          completionUsd: context?.completionCostUsd ?? null,
          byokUsd: usd(row.byok_usage_inference_nano),
        }
      : null,
    identity: flags.identity
      ? {
          apiKeyName: c.apiKeyName,
          apiKeyHashPrefix: row.api_key_hash.slice(0, KEY_HASH_PREFIX_LENGTH),
          userId: row.user_id,
          externalUser: row.external_user,
        }
      : null,
    requestContext: flags.requestContext
      ? {
          appTitle: context?.appTitle ?? null,
          referer: context?.referer ?? null,
          sessionId: context?.sessionId ?? null,
        }
      : null,
    content:
      flags.privacyMode || context === null || (context.input === null && context.output === null)
        ? null
        : {
            input: (context.input ?? []).map((m) => ({ ...m })),
            output: context.output,
          },
  };
}
