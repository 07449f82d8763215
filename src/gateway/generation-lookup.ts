import { notFound } from "../domain/errors.js";
import type { Principal } from "../domain/auth/principal.js";
import { nanoToUsd } from "../lib/money.js";
import type { Db } from "../stores/record-store.js";
import { findGenerationDetail } from "../domain/generation-details/generation-details-repo.js";
import { countGenerationFeedback } from "../domain/generation-feedback/generation-feedback-repo.js";

/** Longer than any generation id, gateway-made or ingested. */
const MAX_ID_LENGTH = 128;

/**
 * GET /generation?id=: one generation the gateway served, to the key that made it and to its
 * organization's management keys; 404 to anyone else (another key, another organization).
 */
export async function getGeneration(db: Db, who: Principal, id: string): Promise<Record<string, unknown>> {
  // Generation ids are short (`gen-` and a random part); an empty or overlong one names none.
  if (id === "" || id.length > MAX_ID_LENGTH) throw notFound("Generation");
  const row = await findGenerationDetail(db, who.organizationId, id);
  if (!row || (!who.isManagement && row.keyHash !== who.keyHash)) throw notFound("Generation");
  const d = row.detail;
  const feedbackCount = await countGenerationFeedback(db, who.organizationId, id);
  const usage = nanoToUsd(BigInt(d.usage_nano));
  const byok = nanoToUsd(BigInt(d.byok_nano));
  return {
    id: row.id,
    model: d.model,
    origin: d.http_referer ?? "",
    created_at: row.createdAt,
    total_cost: usage,
    usage,
    is_byok: d.is_byok,
    data_region: "global",
    // The hosted original's enum: embeddings, or completions for every text-generating API.
    api_type: d.api === "embeddings" ? "embeddings" : "completions",
    app_id: d.app_id,
    cache_discount: null,
    generation_time: d.generation_time_ms,
    latency: d.latency_ms,
    moderation_latency: null,
    upstream_inference_cost: d.is_byok ? byok : null,
    cancelled: d.cancelled,
    streamed: d.streamed,
    external_user: d.external_user,
    finish_reason: d.finish_reason,
    native_finish_reason: d.finish_reason,
    http_referer: d.http_referer,
    preset_id: null,
    provider_name: d.provider_name,
    router: null,
    service_tier: null,
    upstream_id: d.upstream_id,
    user_agent: null,
    web_search_engine: null,
    workspace_id: row.workspaceId,
    native_tokens_cached: d.tokens_cached,
    native_tokens_completion: d.tokens_completion,
    native_tokens_completion_images: null,
    native_tokens_prompt: d.tokens_prompt,
    native_tokens_reasoning: d.tokens_reasoning,
    num_fetches: null,
    num_input_audio_prompt: null,
    num_media_completion: null,
    num_media_prompt: null,
    num_search_results: null,
    tokens_completion: d.tokens_completion,
    tokens_prompt: d.tokens_prompt,
    provider_responses: d.attempts.map((a) => ({
      status: a.status,
      latency: a.durationMs,
      is_byok: a.byok ?? d.is_byok,
    })),
    ...(d.session_id !== null ? { session_id: d.session_id } : {}),
    // Gatehouse's own: how many POST /generation/feedback submissions it has (docs/content-logging.md).
    feedback_count: feedbackCount,
  };
}
