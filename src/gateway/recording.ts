import { createHash } from "node:crypto";
import type { LiveContext } from "../broadcast/live-context.js";
import type { BroadcastMessage } from "../broadcast/encoders/encoder.js";
import { ingestGenerations, type IngestDeps } from "../domain/ingest/ingest-generations.js";
import { nanoToUsd } from "../lib/money.js";
import type { Db } from "../stores/record-store.js";
import type { KeyPolicy } from "../domain/policy/policy.js";

/** Everything known of a finished request (success, error after output, cancelled). */
export interface ServedGeneration {
  id: string;
  key: KeyPolicy;
  model: string;
  /** Provider slug and display name. */
  provider: string;
  providerName: string;
  createdAt: Date;
  appTitle: string | null;
  referer: string | null;
  externalUser: string | null;
  sessionId: string | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** Charged to the key's usage (0 for BYOK). */
  costNano: bigint;
  /** Billed to the organization's own provider key (BYOK only). */
  byokCostNano: bigint;
  isByok: boolean;
  /** Time to first token. */
  latencyMs: number;
  generationTimeMs: number;
  finishReason: string | null;
  streamed: boolean;
  cancelled: boolean;
  upstreamId: string | null;
  attempts: { provider: string; model: string; status: number | null; durationMs: number }[];
  /** For Broadcast only (LiveContext): never written to analytics. */
  input: readonly unknown[];
  output: string | null;
  params: Record<string, number | string | boolean> | null;
}

/** A stable positive app id for a referer (analytics `app_id`): 48 bits of its SHA-256. */
export function appIdOf(referer: string | null, title: string | null): number | null {
  const basis = referer ?? title;
  if (basis === null) return null;
  const n = createHash("sha256").update(basis, "utf8").digest().readUIntBE(0, 6);
  return n === 0 ? 1 : n;
}

const cut = (s: string | null, max = 1024): string | null => (s === null ? null : s.slice(0, max));

/** The generation record in the ingest wire format (spec/activity.md); no prompt or completion. */
export function generationRecord(g: ServedGeneration): Record<string, unknown> {
  const appId = appIdOf(g.referer, g.appTitle);
  return {
    id: g.id,
    created_at: g.createdAt.toISOString(),
    api_key_hash: g.key.hash,
    model: g.model,
    provider: g.provider,
    ...(appId !== null ? { app_id: appId } : {}),
    ...(g.appTitle !== null ? { app_title: cut(g.appTitle) } : {}),
    ...(g.externalUser !== null ? { external_user: cut(g.externalUser) } : {}),
    ...(g.referer !== null ? { origin: cut(g.referer) } : {}),
    ...(g.finishReason !== null ? { finish_reason: g.finishReason.slice(0, 64) } : {}),
    tokens_prompt: g.promptTokens,
    tokens_completion: g.completionTokens,
    tokens_reasoning: g.reasoningTokens,
    tokens_cached: g.cachedTokens,
    is_byok: g.isByok,
    usage: nanoToUsd(g.costNano),
    byok_usage_inference: nanoToUsd(g.byokCostNano),
    latency_ms: g.latencyMs,
    generation_time_ms: g.generationTimeMs,
    streamed: g.streamed,
    cancelled: g.cancelled,
  };
}

/** The gateway-only facts GET /generation shows beside the record. */
export function generationDetail(g: ServedGeneration): Record<string, unknown> {
  return {
    model: g.model,
    provider_name: g.providerName,
    app_id: appIdOf(g.referer, g.appTitle),
    http_referer: g.referer,
    external_user: g.externalUser,
    session_id: g.sessionId,
    tokens_prompt: g.promptTokens,
    tokens_completion: g.completionTokens,
    tokens_cached: g.cachedTokens,
    tokens_reasoning: g.reasoningTokens,
    usage_nano: g.costNano.toString(),
    byok_nano: g.byokCostNano.toString(),
    is_byok: g.isByok,
    latency_ms: g.latencyMs,
    generation_time_ms: g.generationTimeMs,
    finish_reason: g.finishReason,
    streamed: g.streamed,
    cancelled: g.cancelled,
    upstream_id: g.upstreamId,
    attempts: g.attempts,
  };
}

/** What Broadcast may send about this generation (the lead wires the hand-off). */
export function liveContextOf(g: ServedGeneration): LiveContext {
  return {
    input: g.input as BroadcastMessage[],
    output: g.output,
    params: g.params,
    trace: null,
    attempts: g.attempts,
    appTitle: g.appTitle,
    referer: g.referer,
    sessionId: g.sessionId,
    promptCostUsd: null,
    completionCostUsd: null,
  };
}

export interface RecordingDeps extends IngestDeps {
  /** Receives each served generation's LiveContext after its record is stored. */
  onLive?: (organizationId: string, generationId: string, live: LiveContext) => void;
}

/**
 * Records a served generation through the one accounting path (ingestGenerations: ledger,
 * activity, idempotent id), offered to Broadcast with its LiveContext (content and request
 * details) in the same transaction, then its gateway-only detail.
 * Idempotent: a repeated id is a duplicate for ingest and ignored here.
 */
export async function recordGeneration(deps: RecordingDeps, g: ServedGeneration): Promise<void> {
  const live = liveContextOf(g);
  await ingestGenerations(deps, g.key.organizationId, [generationRecord(g)], {
    broadcast: true,
    liveContexts: new Map([[g.id, live]]),
  });
  await insertDetail(deps.store.db, g);
  deps.onLive?.(g.key.organizationId, g.id, live);
}

async function insertDetail(db: Db, g: ServedGeneration): Promise<void> {
  await db
    .insertInto("gateway_generations")
    .values({
      organization_id: g.key.organizationId,
      id: g.id,
      key_hash: g.key.hash,
      workspace_id: g.key.workspaceId,
      created_at: g.createdAt.toISOString(),
      detail: JSON.stringify(generationDetail(g)),
    })
    .onConflict((oc) => oc.columns(["organization_id", "id"]).doNothing())
    .execute();
}
