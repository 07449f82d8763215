import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_USD,
  NANOS_PER_USD,
  nanoToUsd,
  toBigInt,
  usdPerTokenToNanoPerMTok,
  usdToNano,
} from "../../src/lib/money.js";

describe("usdToNano", () => {
  it.each([
    [0, 0n],
    [1, 1_000_000_000n],
    [0.000000001, 1n],
    [0.1, 100_000_000n],
    [0.3, 300_000_000n],
    [12.34, 12_340_000_000n],
    [-2.5, -2_500_000_000n],
    [MAX_USD, 1_000_000_000_000_000_000n],
    [Number("999999999.999999999"), 1_000_000_000_000_000_000n], // as a double this is 1e9
    [Number("123456789.123456789"), 123_456_789_123_456_790n], // prints as 123456789.12345679
  ])("%d USD → %d nano", (usd, nano) => {
    expect(usdToNano(usd)).toBe(nano);
  });

  it("does not carry float multiplication error (0.1 + 0.2 style)", () => {
    // 0.1 + 0.2 is 0.30000000000000004 as a double: it must still be 300_000_000 nano.
    expect(usdToNano(0.1 + 0.2)).toBe(300_000_000n);
    expect(usdToNano(0.1) + usdToNano(0.2)).toBe(usdToNano(0.3));
    // 1.005 * 1e9 = 1004999999.9999999 in floats; the decimal route keeps 1.005 USD exact.
    expect(usdToNano(1.005)).toBe(1_005_000_000n);
    expect(usdToNano(4.35)).toBe(4_350_000_000n);
    expect(usdToNano(0.07)).toBe(70_000_000n);
  });

  it("rounds at the ninth decimal, half away from zero", () => {
    expect(usdToNano(0.0000000004)).toBe(0n);
    expect(usdToNano(0.0000000006)).toBe(1n);
    expect(usdToNano(0.0000000015)).toBe(2n); // the double is just below 1.5e-9: the decimal wins
    expect(usdToNano(0.0000000025)).toBe(3n);
    expect(usdToNano(-0.0000000015)).toBe(-2n);
    expect(usdToNano(2.0000000005)).toBe(2_000_000_001n);
    expect(usdToNano(-0.0000000006)).toBe(-1n);
    expect(usdToNano(1e-12)).toBe(0n);
    expect(usdToNano(-0)).toBe(0n);
  });

  it("refuses non-finite amounts", () => {
    expect(() => usdToNano(Number.NaN)).toThrow(RangeError);
    expect(() => usdToNano(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => usdToNano(Number.NEGATIVE_INFINITY)).toThrow(RangeError);
  });
});

describe("nanoToUsd", () => {
  it.each([
    [0n, 0],
    [1n, 0.000000001],
    [300_000_000n, 0.3],
    [1_000_000_000_000_000_000n, 1e9],
    [-2_500_000_000n, -2.5],
    [12_340_000_000n, 12.34],
  ])("%d nano → %d USD", (nano, usd) => {
    expect(nanoToUsd(nano)).toBe(usd);
  });

  it("accepts the shapes store drivers return (bigint, number, string)", () => {
    expect(nanoToUsd("1500000000")).toBe(1.5);
    expect(nanoToUsd(1_500_000_000)).toBe(1.5);
    expect(nanoToUsd(1_500_000_000n)).toBe(1.5);
  });

  it("gives the shortest decimal a client expects for sums that would drift in floats", () => {
    const sum = usdToNano(0.1) + usdToNano(0.2);
    expect(nanoToUsd(sum)).toBe(0.3);
    expect(JSON.stringify({ usage: nanoToUsd(sum) })).toBe('{"usage":0.3}');
  });
});

describe("money round trip", () => {
  it("nano → USD → nano is exact below 2^22 USD and within the double's resolution up to 1e9 USD", () => {
    const exactBelow = 2n ** 22n * NANOS_PER_USD; // a double's spacing stays under half a nano here
    fc.assert(
      fc.property(
        fc.oneof(
          fc.bigInt({ min: -exactBelow + 1n, max: exactBelow - 1n }),
          fc.bigInt({ min: -BigInt(MAX_USD) * NANOS_PER_USD, max: BigInt(MAX_USD) * NANOS_PER_USD }),
        ),
        (nano) => {
          const back = usdToNano(nanoToUsd(nano));
          const abs = nano < 0n ? -nano : nano;
          if (abs < exactBelow) expect(back).toBe(nano);
          // Above, the JSON number itself cannot carry every nano: off by at most one double spacing.
          else expect(Math.abs(Number(back - nano))).toBeLessThanOrEqual(Number(abs) * Number.EPSILON + 1);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("1e9 USD, the largest accepted amount, converts exactly both ways", () => {
    expect(usdToNano(MAX_USD)).toBe(BigInt(MAX_USD) * NANOS_PER_USD);
    expect(nanoToUsd(BigInt(MAX_USD) * NANOS_PER_USD)).toBe(MAX_USD);
    expect(nanoToUsd(BigInt(MAX_USD) * NANOS_PER_USD - 1n)).toBe(Number("999999999.999999999"));
  });

  it("USD with up to nine decimals → nano → USD gives back the same number", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        fc.integer({ min: 0, max: 999_999_999 }),
        (whole, frac) => {
          const text = `${whole < 0 ? "-" : ""}${Math.abs(whole)}.${String(frac).padStart(9, "0")}`;
          const usd = Number(text);
          expect(nanoToUsd(usdToNano(usd))).toBe(usd);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("usdToNano is monotonic", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e9, max: 1e9, noNaN: true }),
        fc.double({ min: -1e9, max: 1e9, noNaN: true }),
        (a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(usdToNano(lo) <= usdToNano(hi)).toBe(true);
        },
      ),
    );
  });
});

describe("toBigInt", () => {
  it("normalises driver values", () => {
    expect(toBigInt(5n)).toBe(5n);
    expect(toBigInt(5)).toBe(5n);
    expect(toBigInt("9000000000000000000")).toBe(9_000_000_000_000_000_000n);
    expect(toBigInt(null)).toBe(0n);
    expect(toBigInt(undefined)).toBe(0n);
  });
});

describe("nanoToUsd fast path", () => {
  /** The decimal route the fast path replaces within ±2^53 (exact decimal text → nearest double). */
  const viaDecimal = (n: bigint): number => {
    const abs = n < 0n ? -n : n;
    const text = `${abs / NANOS_PER_USD}.${(abs % NANOS_PER_USD).toString().padStart(9, "0")}`;
    return n < 0n ? -Number(text) : Number(text);
  };

  it("gives the double nearest the exact decimal, as the decimal route does", () => {
    const edge = [0n, 1n, -1n, 999_999_999n, 2_067_943_898n, 2n ** 53n, -(2n ** 53n), 2n ** 53n - 1n];
    for (const n of edge) {
      expect(nanoToUsd(n)).toBe(viaDecimal(n));
      if (n >= -(2n ** 53n) && n <= 2n ** 53n) expect(nanoToUsd(Number(n))).toBe(viaDecimal(n));
    }
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 54n), max: 2n ** 54n }), (n) => {
        expect(nanoToUsd(n)).toBe(viaDecimal(n));
        expect(nanoToUsd(n.toString())).toBe(viaDecimal(n));
      }),
      { numRuns: 20_000 },
    );
    expect(Object.is(nanoToUsd(-0), 0)).toBe(true);
  });
});

describe("usdPerTokenToNanoPerMTok", () => {
  it.each([
    [0, 0n],
    [0.000001, 1_000_000_000n],
    [0.000002, 2_000_000_000n],
    [1e-7, 100_000_000n],
    [2.5e-7, 250_000_000n],
    [0.00000015, 150_000_000n], // $0.15 per million tokens
    [0.0000003, 300_000_000n], // 3 × 1e-7 is 3.0000000000000004e-7 as a float product; the decimal is exact
    ["0.000000000000001", 1n],
    ["0.0000012345678901234", null],
    [1e-16, null],
    ["1e-999999999", null],
    [-0.000001, null],
    ["abc", null],
    [Number.NaN, null],
    [Number.POSITIVE_INFINITY, null],
  ] as const)("%s USD per token → %s", (price, nano) => {
    if (nano === null) expect(() => usdPerTokenToNanoPerMTok(price)).toThrow(RangeError);
    else expect(usdPerTokenToNanoPerMTok(price)).toBe(nano);
  });
});
