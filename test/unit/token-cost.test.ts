import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { costNano, worstCase } from "../../src/gateway/reservations/enforcement.js";
import {
  highestPromptPrice,
  tokenCost,
  type Prices,
  type TokenCounts,
} from "../../src/gateway/reservations/token-cost.js";

/**
 * Claude's price ratios at a scale where the table's sums stay small: nano-USD per token 3
 * (prompt), 15 (completion), 0.3 (cache read: 0.1 ×), 3.75 (cache write: 1.25 ×). Prices are
 * nano-USD per million tokens, so 3 nano-USD per token is 3_000_000n.
 */
const CLAUDE: Prices = {
  promptPerMTokNano: 3_000_000n,
  completionPerMTokNano: 15_000_000n,
  cacheReadPerMTokNano: 300_000n,
  cacheWritePerMTokNano: 3_750_000n,
};
const PLAIN: Prices = {
  promptPerMTokNano: CLAUDE.promptPerMTokNano,
  completionPerMTokNano: CLAUDE.completionPerMTokNano,
};
/** Fractions of a nano-USD per token: 3.1 (prompt), 12.7 (completion), 0.31 (read), 3.875 (write). */
const ODD: Prices = {
  promptPerMTokNano: 3_100_000n,
  completionPerMTokNano: 12_700_000n,
  cacheReadPerMTokNano: 310_000n,
  cacheWritePerMTokNano: 3_875_000n,
};

const counts = (
  promptTokens: number,
  completionTokens: number,
  cachedTokens = 0,
  cacheWriteTokens = 0,
): TokenCounts => ({
  promptTokens,
  completionTokens,
  cachedTokens,
  cacheWriteTokens,
});

describe("tokenCost: cache reads and writes at their own prices", () => {
  // [case, prices, counts, total, prompt part, cache part] in nano-USD.
  const table: [string, Prices, TokenCounts, bigint, bigint, bigint][] = [
    ["no cache tokens: prompt × prompt price + completion", CLAUDE, counts(1000, 100), 4_500n, 3_000n, 0n],
    // 700 ordinary × 3 + 200 read × 0.3 + 100 written × 3.75 = 2100 + 60 + 375 = 2535; + 100 × 15
    [
      "reads and writes at their prices, the rest at the prompt price",
      CLAUDE,
      counts(1000, 100, 200, 100),
      4_035n,
      2_535n,
      435n,
    ],
    ["every prompt token read", CLAUDE, counts(1000, 0, 1000), 300n, 300n, 300n],
    ["every prompt token written", CLAUDE, counts(1000, 0, 0, 1000), 3_750n, 3_750n, 3_750n],
    // Without cache prices the cache tokens are ordinary prompt tokens: the plain cost, no cache part.
    [
      "no cache prices: cache tokens at the prompt price",
      PLAIN,
      counts(1000, 100, 200, 100),
      4_500n,
      3_000n,
      0n,
    ],
    [
      "a read price only: writes at the prompt price",
      { ...PLAIN, cacheReadPerMTokNano: CLAUDE.cacheReadPerMTokNano, cacheWritePerMTokNano: null },
      counts(1000, 100, 200, 100),
      // 800 × 3 + 200 × 0.3 = 2460; + 1500
      3_960n,
      2_460n,
      60n,
    ],
    [
      "a write price only: reads at the prompt price",
      { ...PLAIN, cacheWritePerMTokNano: CLAUDE.cacheWritePerMTokNano },
      counts(1000, 100, 200, 100),
      // 900 × 3 + 100 × 3.75 = 3075; + 1500
      4_575n,
      3_075n,
      375n,
    ],
    // 10 ordinary × 3.1 + 3 read × 0.31 + 2 written × 3.875 = 31 + 0.93 + 7.75 = 39.68; + 6 × 12.7 = 76.2
    // → 115.88, rounded up once to 116; the prompt part 39.68 → 40, the completion the rest (76).
    ["fractions of a nano-USD: rounded up once", ODD, counts(15, 6, 3, 2), 116n, 40n, 9n],
    // Rounded separately the two parts would be 1 + 1 = 2 nano-USD; the total is 1.
    [
      "parts add up to the total, never to more",
      { promptPerMTokNano: 400_000n, completionPerMTokNano: 400_000n },
      counts(1, 1),
      1n,
      1n,
      0n,
    ],
    // Counts beyond the prompt: reads are capped at the prompt, writes at what reads leave
    // (80 read × 0.3 + 20 written × 3.75).
    ["cache counts above the prompt are capped at it", CLAUDE, counts(100, 0, 80, 50), 99n, 99n, 99n],
    ["nothing costs nothing", CLAUDE, counts(0, 0), 0n, 0n, 0n],
    [
      "a free model",
      { promptPerMTokNano: 0n, completionPerMTokNano: 0n, cacheReadPerMTokNano: 0n },
      counts(50, 5, 20),
      0n,
      0n,
      0n,
    ],
  ];
  for (const [name, prices, u, total, prompt, cache] of table) {
    it(name, () => {
      expect(tokenCost(prices, u)).toEqual({
        totalNano: total,
        promptNano: prompt,
        completionNano: total - prompt,
        cacheNano: cache,
      });
    });
  }

  it("an endpoint without cache prices costs exactly what the prompt and completion prices give", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 2_000_000 }),
        fc.nat({ max: 200_000 }),
        fc.nat({ max: 2_000_000 }),
        fc.nat({ max: 2_000_000 }),
        (prompt, completion, cached, written) => {
          const cost = tokenCost(ODD_PLAIN, counts(prompt, completion, cached, written));
          expect(cost.totalNano).toBe(costNano(ODD_PLAIN, prompt, completion));
          expect(cost.cacheNano).toBe(0n);
        },
      ),
    );
  });

  it("never undercharged: the total is at least the exact sum, and less than one nano-USD above it", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 2_000_000 }),
        fc.nat({ max: 200_000 }),
        fc.nat({ max: 2_000_000 }),
        fc.nat({ max: 2_000_000 }),
        (prompt, completion, cached, written) => {
          const read = Math.min(cached, prompt);
          const write = Math.min(written, prompt - read);
          // nano-USD × 1e6, exact
          const exact =
            BigInt(prompt - read - write) * ODD.promptPerMTokNano +
            BigInt(read) * ODD.cacheReadPerMTokNano! +
            BigInt(write) * ODD.cacheWritePerMTokNano! +
            BigInt(completion) * ODD.completionPerMTokNano;
          const cost = tokenCost(ODD, counts(prompt, completion, cached, written));
          expect(cost.totalNano * 1_000_000n).toBeGreaterThanOrEqual(exact);
          expect(cost.totalNano * 1_000_000n - exact).toBeLessThan(1_000_000n);
          expect(cost.promptNano + cost.completionNano).toBe(cost.totalNano);
          expect(cost.cacheNano).toBeLessThanOrEqual(cost.promptNano);
        },
      ),
    );
  });
});

const ODD_PLAIN: Prices = {
  promptPerMTokNano: ODD.promptPerMTokNano,
  completionPerMTokNano: ODD.completionPerMTokNano,
};

describe("the reservation's worst case with cache prices", () => {
  it("is the prompt at the prompt price when the cache prices are lower", () => {
    expect(highestPromptPrice({ ...CLAUDE, cacheWritePerMTokNano: 1_000_000n })).toBe(
      CLAUDE.promptPerMTokNano,
    );
    expect(highestPromptPrice(PLAIN)).toBe(PLAIN.promptPerMTokNano);
  });

  it("counts every prompt token at a cache price above the prompt price (a write that costs 1.25 ×)", () => {
    expect(highestPromptPrice(CLAUDE)).toBe(CLAUDE.cacheWritePerMTokNano);
    const readDear = { ...PLAIN, cacheReadPerMTokNano: 5_000_000n };
    expect(highestPromptPrice(readDear)).toBe(5_000_000n);
    // 1000 prompt tokens at 3.75 + 100 completion at 15 nano-USD: 3750 + 1500
    expect(
      worstCase({
        prices: CLAUDE,
        promptTokens: 1000,
        requestedMaxTokens: 100,
        modelMaxCompletionTokens: 4096,
      }),
    ).toEqual({
      wanted: 100,
      worst: 5_250n,
    });
    // At the prompt price alone it would be 4500: less than a prompt written whole to the cache costs.
    expect(tokenCost(CLAUDE, counts(1000, 100, 0, 1000)).totalNano).toBe(5_250n);
  });

  it("no split of the same prompt between ordinary, read and written tokens costs more than the hold", () => {
    const prices = fc.record({
      promptPerMTokNano: fc.bigInt({ min: 0n, max: 10_000_000_000n }),
      completionPerMTokNano: fc.bigInt({ min: 0n, max: 10_000_000_000n }),
      cacheReadPerMTokNano: fc.option(fc.bigInt({ min: 0n, max: 20_000_000_000n }), { nil: null }),
      cacheWritePerMTokNano: fc.option(fc.bigInt({ min: 0n, max: 20_000_000_000n }), { nil: null }),
    });
    fc.assert(
      fc.property(
        prices,
        fc.nat({ max: 1_000_000 }),
        fc.nat({ max: 100_000 }),
        fc.nat({ max: 1_000_000 }),
        fc.nat({ max: 1_000_000 }),
        (p, prompt, completion, cached, written) => {
          const held = worstCase({
            prices: p,
            promptTokens: prompt,
            requestedMaxTokens: completion,
            modelMaxCompletionTokens: completion,
          }).worst;
          expect(tokenCost(p, counts(prompt, completion, cached, written)).totalNano).toBeLessThanOrEqual(
            held,
          );
        },
      ),
    );
  });
});
