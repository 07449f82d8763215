import { hash } from "node:crypto";
import type { LiveContext } from "../../broadcast/live-context.js";
import type { BroadcastMessage } from "../../broadcast/encoders/encoder.js";
import {
  insertGenerationDetails,
  type GenerationDetail,
} from "../../domain/generation-details/generation-details-repo.js";
import { ingestGenerations, type IngestDeps } from "../../domain/ingest/ingest-generations.js";
import { nanoToUsd } from "../../lib/money.js";
import type { Db } from "../../stores/record-store.js";
import type { KeyPolicy } from "../../domain/policy/policy.js";

/** Everything known of a finished request (success, error after output, cancelled). */
export interface ServedGeneration {
  id: string;
  /** The key that made it (what the record and its details name). */
  key: Pick<KeyPolicy, "hash" | "organizationId" | "workspaceId">;
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
  /** Every attempt, in order; `byok`: made with the organization's own key. */
  attempts: { provider: string; model: string; status: number | null; durationMs: number; byok: boolean }[];
  /**
   * For Broadcast only (LiveContext): never written to analytics. Text only, within
   * BROADCAST_MAX_CONTEXT_BYTES (src/broadcast/stored-content.ts builds them when a request settles).
   */
  input: readonly unknown[];
  output: string | null;
  params: Record<string, number | string | boolean> | null;
}

/** A stable positive app id for a referer (analytics `app_id`): 48 bits of its SHA-256. */
export function appIdOf(referer: string | null, title: string | null): number | null {
  const basis = referer ?? title;
  if (basis === null) return null;
  const n = hash("sha256", basis, "buffer").readUIntBE(0, 6);
  return n === 0 ? 1 : n;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;

/**
 * A text the client (a header, the body's `user`) or the upstream (`finish_reason`) chose, as the
 * record holds it: at most `max` characters, each control character (a tab in a header, a newline
 * in `user`) a space. The ingest path refuses control characters, and a refused record was a
 * generation answered but never recorded nor charged (its hold left open).
 */
const cut = (s: string | null, max = 1024): string | null =>
  s === null ? null : firstUnits(s, max).replace(CONTROL, " ");

/**
 * At most `max` UTF-16 units of `s`, never half a character: a cut between a surrogate pair's
 * halves would leave a lone surrogate, which JSON carries as `\ud83d` and ClickHouse's
 * JSONEachRow refuses (with the whole Broadcast batch it is in).
 */
function firstUnits(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** The generation record in the ingest wire format (docs/generation-record.md); no prompt or completion. */
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
    ...(g.finishReason !== null ? { finish_reason: cut(g.finishReason, 64) } : {}),
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
export function generationDetail(g: ServedGeneration): GenerationDetail {
  return {
    model: g.model,
    provider_name: g.providerName,
    app_id: appIdOf(g.referer, g.appTitle),
    // As the record has them (GET /generation shows what analytics shows).
    http_referer: cut(g.referer),
    external_user: cut(g.externalUser),
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
 * Batches up to this size are prepared on the main thread: a few records take microseconds to
 * check and encode, less than the prepare pool's round trip (postMessage there and back, twice).
 * The pool is for large bodies still to parse (POST /activity), and for the gateway's rare large
 * batches.
 */
export const INLINE_PREPARE_MAX = 100;

/**
 * Records served generations of one organization through the one accounting path
 * (ingestGenerations: ledger, activity, idempotent id) as ONE batch, offered to Broadcast with
 * their LiveContexts (content and request details) and with their gateway-only details (one
 * insert), all in the acceptance transaction: all or nothing. Idempotent: a repeated id is a
 * duplicate for ingest and ignored for the details, so a batch may be retried (whole or record by
 * record).
 */
export async function recordBatch(
  deps: RecordingDeps,
  organizationId: string,
  gs: readonly ServedGeneration[],
): Promise<void> {
  if (gs.length === 0) return;
  const lives = new Map(gs.map((g) => [g.id, liveContextOf(g)]));
  const ingest = gs.length <= INLINE_PREPARE_MAX ? { ...deps, preparer: undefined } : deps;
  await ingestGenerations(ingest, organizationId, gs.map(generationRecord), {
    broadcast: true,
    liveContexts: lives,
    // One commit for both: the batch and its details are stored together or not at all.
    alsoInTransaction: (trx) => insertDetails(trx, gs),
  });
  // Stored by now: a listener that throws must not fail (or make a retry repeat) the record.
  for (const [id, live] of lives) {
    try {
      deps.onLive?.(organizationId, id, live);
    } catch {
      // the listener's own failure
    }
  }
}

/** One generation alone (the recorder's retry path; see recorder.ts for the batched one). */
export function recordGeneration(deps: RecordingDeps, g: ServedGeneration): Promise<void> {
  return recordBatch(deps, g.key.organizationId, [g]);
}

/** The details of served generations, as their repository stores them. */
function insertDetails(db: Db, gs: readonly ServedGeneration[]): Promise<void> {
  return insertGenerationDetails(
    db,
    gs.map((g) => ({
      organizationId: g.key.organizationId,
      id: g.id,
      keyHash: g.key.hash,
      workspaceId: g.key.workspaceId,
      createdAt: g.createdAt.toISOString(),
      detail: generationDetail(g),
    })),
  );
}
