/**
 * The categories of POST /generation/feedback, the hosted original's (its SDK's enum is open, so
 * the server checks them). Analytics counts feedback per category (docs/content-logging.md
 * "Counting it"), so the list lives here, below everything that needs it.
 */
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

/**
 * One feedback submission as the activity store holds it (table `generation_feedback`), beside
 * the generations it joins: analytics counts it on the generation it is about, at that
 * generation's time. Written from the record store's queue (src/domain/generation-feedback/), so
 * the record store stays the source of truth; no comment and no key: analytics only counts.
 */
export interface FeedbackRow {
  organization_id: string;
  /** The submission's id (the record store's `generation_feedback.id`): the idempotency key. */
  feedback_id: string;
  generation_id: string;
  /** The generation's created_at (ms, UTC), not the submission's: rows group by generation time. */
  created_at_ms: number;
  category: FeedbackCategory;
  /** When the feedback was submitted (ms, UTC). */
  submitted_at_ms: number;
}
