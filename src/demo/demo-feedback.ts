import type { FeedbackCategory } from "../activity/feedback-row.js";
import type { GenerationFeedback } from "../domain/generation-feedback/generation-feedback-repo.js";
import type { WireRecord } from "./generate-records.js";

/** Share of generations that get feedback; an errored one gets it more often. */
const FEEDBACK_SHARE = 0.01;
const ERROR_FEEDBACK_SHARE = 0.2;

/** What people report, roughly as often as they do. */
const CATEGORY_WEIGHTS: readonly (readonly [FeedbackCategory, number])[] = [
  ["incorrect_response", 35],
  ["formatting", 20],
  ["latency", 15],
  ["incoherence", 12],
  ["other", 10],
  ["api_error", 5],
  ["billing", 3],
];
const TOTAL_WEIGHT = CATEGORY_WEIGHTS.reduce((n, [, w]) => n + w, 0);

const COMMENTS: Partial<Record<FeedbackCategory, string>> = {
  incorrect_response: "The answer cites a function that does not exist.",
  formatting: "Asked for JSON, got a Markdown table.",
  latency: "Took far longer than usual.",
  api_error: "The request failed halfway.",
};

/** FNV-1a of the text, as a number in [0, 1): the same generation always draws the same. */
function draw(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h / 2 ** 32;
}

/**
 * The feedback a demo generation gets, or null (most get none): decided by its id and the seed
 * alone, so the same `gatehouse demo --seed N` gives the same feedback, and the record stream
 * itself is the same with or without it. Submitted a few minutes after the generation, by its key.
 */
export function demoFeedback(
  rec: WireRecord,
  organizationId: string,
  seed: number,
): GenerationFeedback | null {
  const id = rec.id as string;
  const failed = rec.finish_reason === "error";
  if (draw(`${seed}:share:${id}`) >= (failed ? ERROR_FEEDBACK_SHARE : FEEDBACK_SHARE)) return null;
  let category: FeedbackCategory = "api_error";
  if (!failed) {
    let pick = draw(`${seed}:category:${id}`) * TOTAL_WEIGHT;
    for (const [c, w] of CATEGORY_WEIGHTS) {
      category = c;
      if ((pick -= w) < 0) break;
    }
  }
  const afterMs = Math.floor(60_000 + draw(`${seed}:after:${id}`) * 30 * 60_000);
  return {
    id: `fb-demo-${id}`,
    organizationId,
    generationId: id,
    category,
    comment: COMMENTS[category] ?? null,
    keyHash: rec.api_key_hash as string,
    createdAt: new Date(Date.parse(rec.created_at as string) + afterMs).toISOString(),
  };
}
