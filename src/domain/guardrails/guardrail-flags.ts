/**
 * How a guardrail's `flag` matches are recorded on a generation (docs/guardrails.md "Flags"): as
 * classifier tags of Gatehouse's own guardrails classifier, one per label, so analytics counts
 * flagged generations by label with `classifier_dimensions` (and filters on them with
 * `classifier_filters`), and the record's `guardrail_invoked` is true.
 */

/** The classifier id of guardrail flags (fixed: the same in every installation). */
export const GUARDRAIL_CLASSIFIER_ID = "6a1d2f3e-9c4b-4e8a-8f7d-67617264726c";

/** The tags' dimension name. */
export const GUARDRAIL_FLAG_DIMENSION = "guardrail_flag";

/** Longest label kept as a tag value (the tag value's limit). */
const MAX_VALUE = 256;

/** The classifier tags of a generation's flag labels (duplicates dropped, in the order given). */
export function flagTags(
  labels: readonly string[],
): { classifier_id: string; dimension_name: string; value: string }[] {
  const seen = new Set<string>();
  const out: { classifier_id: string; dimension_name: string; value: string }[] = [];
  for (const l of labels) {
    const value = l.slice(0, MAX_VALUE);
    if (value === "" || seen.has(value)) continue;
    seen.add(value);
    out.push({ classifier_id: GUARDRAIL_CLASSIFIER_ID, dimension_name: GUARDRAIL_FLAG_DIMENSION, value });
  }
  return out;
}
