import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { BroadcastGeneration } from "../../src/broadcast/encoders/encoder.js";
import { langfuseAttributes } from "../../src/broadcast/encoders/langfuse-attributes.js";
import { openInferenceAttributes } from "../../src/broadcast/encoders/openinference-attributes.js";
import {
  DEFAULT_OTLP_OPTIONS,
  isInt64,
  otlpTraceJson,
  otlpTraceJsonBytes,
  unixNanos,
  type OtlpOptions,
} from "../../src/broadcast/encoders/otlp-json.js";
import { bareGeneration, sampleGeneration } from "../helpers/broadcast-generations.js";
import { fullGeneration } from "../../bench/lib/full-generation.js";
import { decodeOtlpJson } from "../helpers/otlp-proto.js";
import { referenceOtlpJsonBytes } from "../helpers/otlp-reference.js";

/** The option sets the OTLP destination types use (otlp-destinations.ts). */
const OPTION_SETS: Record<string, OtlpOptions> = {
  default: DEFAULT_OTLP_OPTIONS,
  newrelic: { ...DEFAULT_OTLP_OPTIONS, maxValueLength: 40 },
  arize: {
    metadataPrefix: "metadata.",
    resourceAttributes: () => ({ "openinference.project.name": "proj" }),
    spanAttributes: openInferenceAttributes,
  },
  langfuse: { ...DEFAULT_OTLP_OPTIONS, spanAttributes: langfuseAttributes },
};

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 12 }), // lone surrogates, control characters
  fc.constantFrom("", '"quoted" \\ back\nslash', "é ✓ 😀", "</script>", "\u2028\u2029"),
);
const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
const ms = fc.oneof(
  fc.integer({ min: 0, max: 4_000_000_000_000 }),
  fc.double({ min: 0, max: 4e12, noNaN: true }),
);
const num = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double({ min: -1e9, max: 1e9, noNaN: true }),
  fc.constantFrom(0, -0, 0.1, 1e21, 2 ** 53 + 2),
);
const hex = (n: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: n, maxLength: n });

const generation: fc.Arbitrary<BroadcastGeneration> = fc.record({
  id: fc.oneof(text, fc.constant("gen-1732420000-AbC")),
  createdAtMs: ms,
  model: text,
  provider: text,
  finishReason: nullable(fc.oneof(text, fc.constantFrom("stop", "error", "length"))),
  tokensPrompt: fc.nat(),
  tokensCompletion: fc.nat(),
  tokensCached: fc.nat(),
  tokensReasoning: fc.nat(),
  latencyMs: fc.oneof(fc.nat(100_000), fc.double({ min: 0, max: 1e5, noNaN: true })),
  generationTimeMs: nullable(fc.oneof(fc.nat(100_000), fc.double({ min: -10, max: 1e5, noNaN: true }))),
  streamed: fc.boolean(),
  cancelled: fc.boolean(),
  isByok: fc.boolean(),
  params: nullable(
    fc.dictionary(
      fc.oneof(fc.constantFrom("temperature", "max_tokens", "top_p", "seed", "top_k"), text),
      fc.oneof(num, text, fc.boolean()),
      { maxKeys: 5 },
    ),
  ),
  trace: nullable(
    fc.dictionary(
      fc.oneof(
        fc.constantFrom("trace_id", "trace_name", "span_name", "generation_name", "parent_span_id", "0", "7"),
        text,
      ),
      fc.oneof(text, hex(32), hex(16)),
      { maxKeys: 6 },
    ),
  ),
  attempts: fc.array(
    fc.record({
      provider: text,
      model: text,
      status: nullable(fc.constantFrom(200, 429, 500, 503)),
      durationMs: fc.oneof(fc.nat(10_000), fc.double({ min: -5, max: 1e4, noNaN: true })),
    }),
    { maxLength: 4 },
  ),
  cost: nullable(
    fc.record({
      totalUsd: num,
      promptUsd: nullable(num),
      completionUsd: nullable(num),
      byokUsd: num,
    }),
  ),
  identity: nullable(
    fc.record({
      apiKeyName: nullable(text),
      apiKeyHashPrefix: hex(12),
      userId: nullable(text),
      externalUser: nullable(text),
    }),
  ),
  requestContext: nullable(
    fc.record({ appTitle: nullable(text), referer: nullable(text), sessionId: nullable(text) }),
  ),
  content: nullable(
    fc.record({
      input: fc.array(
        fc.record({
          role: fc.constantFrom("system", "user", "assistant"),
          content: fc.oneof(
            text,
            fc.array(
              fc.oneof(
                fc.record({ type: fc.constant("text"), text }),
                fc.record({ type: fc.constant("image_url"), image_url: fc.record({ url: text }) }),
              ),
              { maxLength: 3 },
            ),
          ),
        }),
        { maxLength: 3 },
      ),
      output: nullable(text),
    }),
  ),
});

const parse = (bytes: Uint8Array): unknown => JSON.parse(Buffer.from(bytes).toString("utf8"));

/**
 * The reference's output with its one known fault mended: it sends every integer as an
 * `intValue`, even one beyond int64 (1e21 as `{"intValue":1e21}`), which receivers refuse; the
 * writer sends those as a `doubleValue` (the test below).
 */
function referenceMended(bytes: Uint8Array): unknown {
  const mend = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(mend);
    if (typeof v !== "object" || v === null) return v;
    const o = v as Record<string, unknown>;
    if (typeof o.intValue === "number" && !isInt64(o.intValue)) return { doubleValue: o.intValue };
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, mend(x)]));
  };
  return mend(parse(bytes));
}

describe("the direct OTLP JSON writer", () => {
  it.each(Object.keys(OPTION_SETS))(
    "%s options: the same JSON as otlp-transformer's JsonTraceSerializer on random batches",
    (name) => {
      const opts = OPTION_SETS[name]!;
      fc.assert(
        fc.property(fc.array(generation, { maxLength: 6 }), (batch) => {
          expect(parse(otlpTraceJsonBytes(batch, opts))).toEqual(
            referenceMended(referenceOtlpJsonBytes(batch, opts)),
          );
        }),
        { numRuns: 300 },
      );
    },
  );

  it("byte-identical to the reference on the fixtures, and decodes with the official definitions", () => {
    const batch = [sampleGeneration(), bareGeneration("gen-b", 1_763_000_000_123), fullGeneration(7)];
    for (const opts of Object.values(OPTION_SETS)) {
      const mine = Buffer.from(otlpTraceJsonBytes(batch, opts)).toString("utf8");
      expect(mine).toBe(Buffer.from(referenceOtlpJsonBytes(batch, opts)).toString("utf8"));
    }
    const decoded = decodeOtlpJson(otlpTraceJson(batch, DEFAULT_OTLP_OPTIONS));
    expect(decoded.roundTrip).toEqual(decoded.input);
    expect(decoded.message.resourceSpans).toHaveLength(3);
  });

  it("an integer beyond int64 (a seed of 2^64 - 1) is a doubleValue the official definitions read; up to it, an intValue", () => {
    const attr = (json: string, key: string): unknown =>
      (
        JSON.parse(json).resourceSpans[0].scopeSpans[0].spans as {
          attributes: { key: string; value: unknown }[];
        }[]
      )
        .flatMap((span) => span.attributes)
        .find((a) => a.key === key)?.value;
    const withParams = (params: Record<string, number>) => ({
      ...bareGeneration("gen-seed", 1_763_000_000_000),
      params,
    });
    const big = otlpTraceJson([withParams({ seed: 2 ** 64 - 1, max_tokens: 2 ** 53 })], DEFAULT_OTLP_OPTIONS);
    expect(attr(big, "gen_ai.request.seed")).toEqual({ doubleValue: 2 ** 64 });
    expect(attr(big, "gen_ai.request.max_tokens")).toEqual({ intValue: 2 ** 53 });
    const decoded = decodeOtlpJson(big);
    expect(decoded.roundTrip).toEqual(decoded.input);
    // The reference's intValue for it does not survive the same definitions: the fault mended above.
    const reference = Buffer.from(
      referenceOtlpJsonBytes([withParams({ seed: 1e21 })], DEFAULT_OTLP_OPTIONS),
    ).toString("utf8");
    expect(attr(reference, "gen_ai.request.seed")).toEqual({ intValue: 1e21 });
    const refDecoded = decodeOtlpJson(reference);
    expect(refDecoded.roundTrip).not.toEqual(refDecoded.input);
    expect([2 ** 63 - 1024, -(2 ** 63)].map(isInt64)).toEqual([true, true]);
    expect([2 ** 63, -(2 ** 63) - 2048, 0.5].map(isInt64)).toEqual([false, false, false]);
  });

  it("nanosecond times are exact decimal strings", () => {
    expect(unixNanos(1_763_000_000_123)).toBe("1763000000123000000");
    expect(unixNanos(1_763_000_000_123.5)).toBe("1763000000123500000");
    expect(unixNanos(5)).toBe("5000000");
    expect(unixNanos(0)).toBe("0");
    expect(unixNanos(999.9999999)).toBe("1000000000");
  });
});
