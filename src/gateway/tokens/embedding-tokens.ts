import { embeddingItems, type EmbeddingInput } from "../providers/provider.js";
import { CountBudget, countTextTokens } from "./count-tokens.js";

/**
 * An embeddings input's tokens, for the reservation's worst case and for an upstream that reports
 * no usage: each text counted as chat text is (count-tokens.ts: one budget for the request, past
 * it an estimate), each list of token ids by its length, exactly. No per-input overhead: an
 * embedding model reads the text as it is. `longest` is the largest input's count, to hold
 * against the model's context length.
 */
export interface EmbeddingTokens {
  total: number;
  longest: number;
}

export function countEmbeddingTokens(input: EmbeddingInput): EmbeddingTokens {
  const budget = new CountBudget();
  let total = 0;
  let longest = 0;
  for (const item of embeddingItems(input)) {
    const n = typeof item === "string" ? countTextTokens(item, budget) : item.length;
    total += n;
    longest = Math.max(longest, n);
  }
  return { total, longest };
}
