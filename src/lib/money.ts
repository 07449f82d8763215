/**
 * Money is held as exact integers of nano-USD (1e-9 USD) and converted to JSON numbers only at the
 * edge. Conversions go through decimal strings, never through float multiplication.
 */
export const NANOS_PER_USD = 1_000_000_000n;
/** 2^53: integers up to this magnitude are exact doubles. */
const MAX_EXACT = 2n ** 53n;

/** Largest amount accepted in a request: 1e9 USD. */
export const MAX_USD = 1_000_000_000;

/**
 * USD (a finite JSON number) → nano-USD, rounded half away from zero at the 9th decimal. The
 * amount is read as the shortest decimal that round-trips the double (what the client wrote:
 * 0.0000000015 → 2 nano, 0.1 + 0.2 → 300_000_000), never through float multiplication.
 */
export function usdToNano(usd: number): bigint {
  if (!Number.isFinite(usd)) throw new RangeError("amount must be finite");
  const [mantissa = "0", exponent = "0"] = Math.abs(usd).toString().split("e");
  const [whole = "0", frac = ""] = mantissa.split(".");
  const digits = BigInt(whole + frac); // |usd| = digits × 10^(exponent − frac.length)
  const shift = Number(exponent) - frac.length + 9; // nano = digits × 10^shift
  let nano: bigint;
  if (shift >= 0) {
    nano = digits * 10n ** BigInt(shift);
  } else {
    const divisor = 10n ** BigInt(-shift);
    nano = digits / divisor;
    if ((digits % divisor) * 2n >= divisor) nano += 1n;
  }
  return usd < 0 ? -nano : nano;
}

/**
 * nano-USD → USD as a JSON number (the only place money becomes a float): the double nearest the
 * exact decimal, so 2_067_943_898 nano is 2.067943898 (adding whole and fraction as floats is not).
 */
export function nanoToUsd(nano: bigint | number | string): number {
  // Fast path, same result: an integer within ±2^53 is an exact double, and IEEE division is
  // correctly rounded, so n / 1e9 is the double nearest the exact decimal as well.
  if (typeof nano === "bigint" ? nano >= -MAX_EXACT && nano <= MAX_EXACT : Number.isSafeInteger(nano)) {
    return Number(nano) / 1e9 + 0; // + 0: -0 → 0, as the decimal path gives
  }
  const n = BigInt(nano);
  const abs = n < 0n ? -n : n;
  const text = `${abs / NANOS_PER_USD}.${(abs % NANOS_PER_USD).toString().padStart(9, "0")}`;
  return n < 0n ? -Number(text) : Number(text);
}

/** Store drivers return 64-bit integers as bigint, number or string; normalise to bigint. */
export function toBigInt(v: bigint | number | string | null | undefined): bigint {
  if (v === null || v === undefined) return 0n;
  return typeof v === "bigint" ? v : BigInt(v);
}

/** The catalog's price unit: nano-USD per million tokens = USD per token × 1e15. */
const PRICE_SCALE_DIGITS = 15;

/**
 * A price in USD per token (a JSON number as written, or a decimal string) → nano-USD per
 * million tokens, exactly: the decimal is read digit by digit (a number through its shortest
 * round-trip text, so 0.000001 is the decimal 0.000001, not the nearest double × 1e15), and a
 * price finer than 1e-15 USD per token, which no integer of that unit can hold, is refused
 * rather than rounded. Throws RangeError saying what is wrong.
 */
export function usdPerTokenToNanoPerMTok(price: number | string): bigint {
  if (typeof price === "number" && !Number.isFinite(price)) throw new RangeError("must be a finite number");
  const text = typeof price === "number" ? String(price) : price.trim();
  const m = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) throw new RangeError("must be a non-negative decimal number");
  const [, whole = "0", frac = "", exp = "0"] = m;
  const digits = BigInt(whole + frac);
  if (digits === 0n) return 0n;
  const shift = Number(exp) - frac.length + PRICE_SCALE_DIGITS; // value = digits × 10^(shift − 15)
  if (shift > 40) throw new RangeError("is too large");
  if (shift >= 0) return digits * 10n ** BigInt(shift);
  // digits < 10^(its length): a larger divisor cannot divide it (and is not worth computing)
  if (-shift > text.length) throw new RangeError("is finer than 1e-15 USD per token");
  const divisor = 10n ** BigInt(-shift);
  if (digits % divisor !== 0n) throw new RangeError("is finer than 1e-15 USD per token");
  return digits / divisor;
}
