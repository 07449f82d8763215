import type { FeedbackCategory } from "../../activity/feedback-row.js";
import { notFound } from "../../domain/errors.js";
import type { Principal } from "../../domain/auth/principal.js";
import { findGenerationDetail } from "../../domain/generation-details/generation-details-repo.js";
import { storeFeedback, type FeedbackActivity } from "../../domain/generation-feedback/feedback-activity.js";
import { newId } from "../../lib/ids.js";
import type { RecordStore } from "../../stores/record-store.js";

export interface FeedbackInput {
  generation_id: string;
  category: FeedbackCategory;
  comment?: string;
}

export interface FeedbackDeps {
  store: RecordStore;
  /** This process's writer of queued feedback to the activity store (analytics). */
  feedbackActivity: FeedbackActivity;
}

/**
 * POST /generation/feedback: stores one feedback on a generation the gateway served for the
 * caller's organization (GET /generation knows it); 404 for any other id. The route's schema has
 * checked the fields. Several submissions on one generation are all kept (GET /generation counts
 * them: `feedback_count`). The submission is queued for analytics in the same transaction and
 * written there before the answer (docs/content-logging.md "Counting it"); when that write fails
 * the answer is still 200 (the feedback is stored) and a later pass writes it.
 */
export async function submitFeedback(
  deps: FeedbackDeps,
  who: Principal,
  input: FeedbackInput,
  now: Date,
): Promise<void> {
  const generation = await findGenerationDetail(deps.store.db, who.organizationId, input.generation_id);
  if (!generation) throw notFound("Generation");
  const id = newId();
  await storeFeedback(
    deps.store,
    {
      id,
      organizationId: who.organizationId,
      generationId: input.generation_id,
      category: input.category,
      comment: input.comment ?? null,
      keyHash: who.keyHash,
      createdAt: now.toISOString(),
    },
    Date.parse(generation.createdAt),
  );
  await deps.feedbackActivity.writeNow(id);
}
