import { notFound } from "../../domain/errors.js";
import type { Principal } from "../../domain/auth/principal.js";
import { findGenerationDetail } from "../../domain/generation-details/generation-details-repo.js";
import { insertGenerationFeedback } from "../../domain/generation-feedback/generation-feedback-repo.js";
import { newId } from "../../lib/ids.js";
import type { Db } from "../../stores/record-store.js";

/** The categories the hosted original takes (the SDK's enum is open, so the server checks). */
export const FEEDBACK_CATEGORIES = [
  "latency",
  "incoherence",
  "incorrect_response",
  "formatting",
  "billing",
  "api_error",
  "other",
] as const;
export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number];

export interface FeedbackInput {
  generation_id: string;
  category: FeedbackCategory;
  comment?: string;
}

/**
 * POST /generation/feedback: stores one feedback on a generation the gateway served for the
 * caller's organization (GET /generation knows it); 404 for any other id. The route's schema has
 * checked the fields. Several submissions on one generation are all kept (GET /generation counts
 * them: `feedback_count`).
 */
export async function submitFeedback(db: Db, who: Principal, input: FeedbackInput, now: Date): Promise<void> {
  const generation = await findGenerationDetail(db, who.organizationId, input.generation_id);
  if (!generation) throw notFound("Generation");
  await insertGenerationFeedback(db, {
    id: newId(),
    organizationId: who.organizationId,
    generationId: input.generation_id,
    category: input.category,
    comment: input.comment ?? null,
    keyHash: who.keyHash,
    createdAt: now.toISOString(),
  });
}
