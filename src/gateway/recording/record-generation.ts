import { DomainError } from "../../domain/errors.js";
import type { LiveContext } from "../../broadcast/live-context.js";
import type { BroadcastMessage } from "../../broadcast/encoders/encoder.js";
import {
  insertGenerationDetails,
  type GenerationDetail,
} from "../../domain/generation-details/generation-details-repo.js";
import { ingestGenerations, ingestRows, type IngestDeps } from "../../domain/ingest/ingest-generations.js";
import { nanoToUsd } from "../../lib/money.js";
import { flagTags } from "../../domain/guardrails/guardrail-flags.js";
import type { Db } from "../../stores/record-store.js";
import { servedBatch } from "./generation-row.js";
import { appIdOf, cut, type JournaledGeneration, type ServedGeneration } from "./served-generation.js";

export type { JournaledGeneration, ServedGeneration };

/** The generation record in the ingest wire format (docs/generation-record.md); no prompt or completion. */
export function generationRecord(g: JournaledGeneration): Record<string, unknown> {
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
    api: g.api,
    tokens_prompt: g.promptTokens,
    tokens_completion: g.completionTokens,
    tokens_reasoning: g.reasoningTokens,
    tokens_cached: g.cachedTokens,
    is_byok: g.isByok,
    usage: nanoToUsd(g.costNano),
    byok_usage_inference: nanoToUsd(g.byokCostNano),
    usage_cache: nanoToUsd(g.cacheCostNano),
    latency_ms: g.latencyMs,
    generation_time_ms: g.generationTimeMs,
    streamed: g.streamed,
    cancelled: g.cancelled,
    ...(g.guardrail?.invoked ? { guardrail_invoked: true } : {}),
    ...(g.guardrail && g.guardrail.flags.length > 0 ? { classifications: flagTags(g.guardrail.flags) } : {}),
  };
}

/** The gateway-only facts GET /generation shows beside the record. */
export function generationDetail(g: JournaledGeneration): GenerationDetail {
  return {
    model: g.model,
    provider_name: g.providerName,
    api: g.api,
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

/** What Broadcast may send about this generation (content and request details). */
export function liveContextOf(g: JournaledGeneration): LiveContext {
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

/** Who made a generation and when: what a listener of stored generations needs beside the LiveContext. */
export interface LiveOrigin {
  keyHash: string;
  workspaceId: string;
  createdAt: Date;
}

export interface RecordingDeps extends IngestDeps {
  /** Receives each served generation's LiveContext after its record is stored. */
  onLive?: (organizationId: string, generationId: string, live: LiveContext, origin: LiveOrigin) => void;
}

/**
 * Records served generations of one organization through the one accounting path (ingest's
 * acceptance: ledger, activity, idempotent id) as ONE batch of rows built from the typed
 * generations (generation-row.ts: no wire JSON, no second validation), offered to Broadcast with
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
  await ingestRows(deps, servedBatch(organizationId, gs), {
    broadcast: true,
    liveContexts: lives,
    // One commit for both: the batch and its details are stored together or not at all.
    alsoInTransaction: (trx) => insertDetails(trx, gs),
  });
  announce(deps, organizationId, gs, lives);
}

/** One generation alone (the recorder's retry path; see generation-recorder.ts for the batched one). */
export function recordGeneration(deps: RecordingDeps, g: ServedGeneration): Promise<void> {
  return recordBatch(deps, g.key.organizationId, [g]);
}

/**
 * Batches up to this size are prepared on the main thread: a few records take microseconds to
 * check and encode, less than the prepare pool's round trip (postMessage there and back, twice).
 */
export const INLINE_PREPARE_MAX = 100;

/**
 * Records generations read back from the recording journal (journal.ts) at start: a file, so
 * they go through ingest's full validation as wire records (a damaged entry is refused, not
 * stored), their keys looked up. Otherwise as recordBatch.
 */
export async function recordJournaled(
  deps: RecordingDeps,
  organizationId: string,
  gs: readonly JournaledGeneration[],
): Promise<void> {
  if (gs.length === 0) return;
  const lives = new Map(gs.map((g) => [g.id, liveContextOf(g)]));
  const ingest = gs.length <= INLINE_PREPARE_MAX ? { ...deps, preparer: undefined } : deps;
  await ingestGenerations(ingest, organizationId, gs.map(generationRecord), {
    broadcast: true,
    liveContexts: lives,
    alsoInTransaction: (trx) => insertDetails(trx, gs),
  });
  announce(deps, organizationId, gs, lives);
}

/** Refusals of a record (ingest's DomainError): final, reported, forgotten. */
export type Refused = (err: unknown, generationId: string) => void;

/**
 * Records `gs` one batch per organization (idempotent by id: one that was committed after all is a
 * duplicate, never a second charge); where a batch fails, each record alone. `done` is told of
 * every record recorded or refused. A record ingest refuses (a DomainError: the record itself is
 * wrong, which no retry can mend) is reported to `refused`; any other failure (the store down)
 * throws, and the records not done yet are left to the caller.
 */
export async function recordEach(
  deps: RecordingDeps,
  gs: readonly JournaledGeneration[],
  refused: Refused,
  done: (ids: string[]) => void,
): Promise<{ recorded: number; refused: number }> {
  const byOrg = new Map<string, JournaledGeneration[]>();
  for (const g of gs) {
    const list = byOrg.get(g.key.organizationId);
    if (list) list.push(g);
    else byOrg.set(g.key.organizationId, [g]);
  }
  let recorded = 0;
  let refusedCount = 0;
  for (const [org, list] of byOrg) {
    try {
      await recordJournaled(deps, org, list);
      recorded += list.length;
      done(list.map((g) => g.id));
      continue;
    } catch {
      // Alone, each record succeeds or fails on its own; only a refusal is final.
    }
    for (const g of list) {
      try {
        await recordJournaled(deps, org, [g]);
        recorded++;
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        refused(err, g.id);
        refusedCount++;
      }
      done([g.id]);
    }
  }
  return { recorded, refused: refusedCount };
}

/** Tells the listener of each stored generation's LiveContext and origin. */
function announce(
  deps: RecordingDeps,
  organizationId: string,
  gs: readonly JournaledGeneration[],
  lives: ReadonlyMap<string, LiveContext>,
): void {
  if (!deps.onLive) return;
  // Stored by now: a listener that throws must not fail (or make a retry repeat) the record.
  for (const g of gs) {
    const live = lives.get(g.id);
    if (!live) continue;
    try {
      deps.onLive(organizationId, g.id, live, {
        keyHash: g.key.hash,
        workspaceId: g.key.workspaceId,
        createdAt: g.createdAt,
      });
    } catch {
      // the listener's own failure
    }
  }
}

/** The details of served generations, as their repository stores them. */
function insertDetails(db: Db, gs: readonly JournaledGeneration[]): Promise<void> {
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
