import type { ProviderUsage } from "../providers/provider.js";

/**
 * Prices of one endpoint, nano-USD per million tokens. A cache price absent or null: those tokens
 * are ordinary prompt tokens, at the prompt price.
 */
export interface Prices {
  promptPerMTokNano: bigint;
  completionPerMTokNano: bigint;
  /** Cached prompt tokens read (ProviderUsage.cachedTokens). */
  cacheReadPerMTokNano?: bigint | null;
  /** Prompt tokens written to the provider's cache (ProviderUsage.cacheWriteTokens). */
  cacheWritePerMTokNano?: bigint | null;
}

/** The counts a cost is made of: `promptTokens` counts every prompt token, cache reads and writes included. */
export type TokenCounts = Pick<
  ProviderUsage,
  "promptTokens" | "completionTokens" | "cachedTokens" | "cacheWriteTokens"
>;

/** What an answer's tokens cost, nano-USD, and how that splits. */
export interface TokenCost {
  /** The whole cost, rounded up once to the next nano-USD: never undercharged. */
  totalNano: bigint;
  /** The prompt's part, cache reads and writes included (rounded up; at most the total). */
  promptNano: bigint;
  /** The rest of the total: prompt + completion is exactly the total. */
  completionNano: bigint;
  /**
   * The part of the prompt's priced at a cache price (cache reads at the read price, writes at the
   * write price; rounded up; at most the prompt's part). 0 when the endpoint has no cache price:
   * its cache tokens are then ordinary prompt tokens.
   */
  cacheNano: bigint;
}

const MILLION = 1_000_000n;

/** A count as a bigint: an upstream's count is a non-negative integer, anything else is 0. */
const tokens = (n: number): bigint => (Number.isSafeInteger(n) && n > 0 ? BigInt(n) : 0n);

const ceilMillionth = (num: bigint): bigint => (num + MILLION - 1n) / MILLION;

/**
 * The cost of an answer's tokens (docs/gateway.md "What a request costs"): cached (read) tokens at
 * the cache-read price and cache writes at the cache-write price when the endpoint has them, the
 * rest of the prompt at the prompt price, the completion at the completion price. Sums are exact
 * (nano-USD × 1e6 per token) and rounded up once. Reads are at most the prompt, writes at most
 * what the reads leave: an upstream whose cache counts exceed its prompt count is charged no more
 * prompt tokens than it reported.
 */
export function tokenCost(p: Prices, u: TokenCounts): TokenCost {
  const prompt = tokens(u.promptTokens);
  const read = min(tokens(u.cachedTokens), prompt);
  const write = min(tokens(u.cacheWriteTokens), prompt - read);
  const readPrice = p.cacheReadPerMTokNano ?? null;
  const writePrice = p.cacheWritePerMTokNano ?? null;
  const cacheNum =
    (readPrice === null ? 0n : read * readPrice) + (writePrice === null ? 0n : write * writePrice);
  // Cache tokens without a price of their own are ordinary prompt tokens.
  const ordinary = prompt - (readPrice === null ? 0n : read) - (writePrice === null ? 0n : write);
  const promptNum = ordinary * p.promptPerMTokNano + cacheNum;
  const completionNum = tokens(u.completionTokens) * p.completionPerMTokNano;
  const totalNano = ceilMillionth(promptNum + completionNum);
  const promptNano = ceilMillionth(promptNum);
  return {
    totalNano,
    promptNano,
    completionNano: totalNano - promptNano,
    cacheNano: ceilMillionth(cacheNum),
  };
}

/**
 * The highest price any prompt token may cost: the prompt price, or a cache price above it (a
 * cache write usually costs more than an ordinary prompt token: Anthropic's is 1.25 times). A
 * reservation counts every prompt token at this price, so that no split of the prompt between
 * ordinary, cached and written tokens costs more than was held.
 */
export function highestPromptPrice(p: Prices): bigint {
  let highest = p.promptPerMTokNano;
  for (const c of [p.cacheReadPerMTokNano, p.cacheWritePerMTokNano]) {
    if (c !== undefined && c !== null && c > highest) highest = c;
  }
  return highest;
}

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
