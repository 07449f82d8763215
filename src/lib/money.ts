/**
 * Money is held as exact integers of nano-USD (1e-9 USD) and converted to JSON numbers only at the
 * edge. Conversions go through decimal strings, never through float multiplication.
 */
export const NANOS_PER_USD = 1_000_000_000n;

/** Largest amount accepted in a request: 1e9 USD. */
export const MAX_USD = 1_000_000_000;

/** USD (a finite JSON number) → nano-USD, rounded half away from zero at the 9th decimal. */
export function usdToNano(usd: number): bigint {
  if (!Number.isFinite(usd)) throw new RangeError("amount must be finite");
  const negative = usd < 0;
  const fixed = Math.abs(usd).toFixed(9); // exact decimal expansion of the double, rounded
  const [whole = "0", frac = ""] = fixed.split(".");
  const nano = BigInt(whole) * NANOS_PER_USD + BigInt(frac.padEnd(9, "0"));
  return negative ? -nano : nano;
}

/** nano-USD → USD as a JSON number (the only place money becomes a float). */
export function nanoToUsd(nano: bigint | number | string): number {
  const n = BigInt(nano);
  const whole = n / NANOS_PER_USD;
  const frac = n % NANOS_PER_USD;
  return Number(whole) + Number(frac) / 1e9;
}

/** Store drivers return 64-bit integers as bigint, number or string; normalise to bigint. */
export function toBigInt(v: bigint | number | string | null | undefined): bigint {
  if (v === null || v === undefined) return 0n;
  return typeof v === "bigint" ? v : BigInt(v);
}
