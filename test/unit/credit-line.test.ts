import { describe, expect, it } from "vitest";
import { parseCreditLine } from "../../src/cli/commands/org-credit-line.js";
import { UsageError } from "../../src/cli/usage-error.js";
import { totalCreditsNano } from "../../src/domain/organizations/organization-credits.js";

describe("parseCreditLine (gatehouse org credit-line)", () => {
  it("reads a decimal USD amount exactly, in nano-USD; none clears", () => {
    expect(parseCreditLine("250")).toBe(250_000_000_000n);
    expect(parseCreditLine("12.5")).toBe(12_500_000_000n);
    expect(parseCreditLine("0")).toBe(0n);
    expect(parseCreditLine("0.000000001")).toBe(1n);
    // Not exact as a double: read digit by digit.
    expect(parseCreditLine("999999999.123456789")).toBe(999_999_999_123_456_789n);
    expect(parseCreditLine("1000000000")).toBe(1_000_000_000_000_000_000n);
    expect(parseCreditLine("none")).toBeNull();
  });

  it("refuses anything else with a usage error naming the argument", () => {
    for (const bad of [
      "",
      "-1",
      "1e3",
      "1,5",
      ".5",
      "5.",
      "0.0000000001",
      "1000000000.000000001",
      "None",
      "Infinity",
    ]) {
      expect(() => parseCreditLine(bad), bad).toThrow(UsageError);
      expect(() => parseCreditLine(bad), bad).toThrow(/^USD: /);
    }
  });
});

describe("totalCreditsNano", () => {
  it("is the credit line when one is set, even 0, whatever the keys' limits", () => {
    expect(totalCreditsNano(7n, [1n, 2n])).toBe(7n);
    expect(totalCreditsNano(0n, [1n, 2n])).toBe(0n);
  });

  it("is otherwise the exact sum of the lifetime limits, past 64 bits too (0 without any)", () => {
    expect(totalCreditsNano(null, [1n, 2n, 3n])).toBe(6n);
    expect(totalCreditsNano(null, [])).toBe(0n);
    const max = 1_000_000_000_000_000_000n; // 1e9 USD, the largest key limit
    expect(
      totalCreditsNano(
        null,
        Array.from({ length: 10 }, () => max),
      ),
    ).toBe(10n * max);
  });
});
