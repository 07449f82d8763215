import type { BroadcastGeneration, BroadcastMessage } from "./encoder.js";
import { isPlaceholder, placeholderText } from "../content-placeholders.js";
import { parentSpanIdHex, spanIdHex, traceIdHex } from "./ids.js";

/**
 * One generation as a small trace, the shape every encoder renders: an optional wrapper span
 * (`trace.span_name`), the generation span, and one child span per provider attempt when the
 * gateway made more than one. Timing, ids and content (multimodal parts stripped) are decided
 * here once, so the OTLP and native encoders agree.
 */
export interface SpanView {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  role: "wrapper" | "generation" | "attempt";
  startMs: number;
  endMs: number;
  error: boolean;
  attempt?: { index: number; provider: string; model: string; status: number | null };
}

export interface GenerationView {
  g: BroadcastGeneration;
  traceId: string;
  /** The trace name: `trace.trace_name`, else "OpenRouter Request" (the hosted original's). */
  traceName: string;
  spans: SpanView[];
  generation: SpanView;
  /** `trace` keys other than the ones that shape the tree: custom metadata. */
  metadata: Record<string, string>;
  /** Text-only input and output; null when content is absent (privacy mode or not kept). */
  input: BroadcastMessage[] | null;
  output: string | null;
  sessionId: string | null;
  userId: string | null;
  finishReason: string | null;
}

/** `trace` keys with a meaning of their own; every other key is custom metadata. */
const TRACE_KEYS = new Set(["trace_id", "trace_name", "span_name", "generation_name", "parent_span_id"]);

/**
 * Keeps text parts only: images, audio and files never leave the gateway (hosted behaviour). The
 * placeholder stored in place of each (content-placeholders.ts) is sent as a text part that names
 * it (`[image image/png 5.0 MiB]`); a binary part stored before placeholders is left out.
 */
function stripMultimodal(message: BroadcastMessage): BroadcastMessage {
  if (!Array.isArray(message.content)) return message;
  const parts: unknown[] = [];
  for (const p of message.content as unknown[]) {
    if (isPlaceholder(p)) parts.push({ type: "text", text: placeholderText(p) });
    else if (typeof p === "object" && p !== null && (p as { type?: unknown }).type === "text") parts.push(p);
  }
  return { ...message, content: parts };
}

export function viewOf(g: BroadcastGeneration): GenerationView {
  const trace = g.trace ?? {};
  const traceId = traceIdHex(g.id, trace.trace_id);
  const start = g.createdAtMs;
  const end = start + Math.max(0, g.generationTimeMs ?? g.latencyMs);
  const spans: SpanView[] = [];
  let parent = parentSpanIdHex(trace.parent_span_id);
  if (trace.span_name !== undefined && trace.span_name !== "") {
    const wrapper: SpanView = {
      spanId: spanIdHex(g.id, "wrapper"),
      parentSpanId: parent,
      name: trace.span_name,
      role: "wrapper",
      startMs: start,
      endMs: end,
      error: false,
    };
    spans.push(wrapper);
    parent = wrapper.spanId;
  }
  const lastStatus = g.attempts.at(-1)?.status ?? null;
  const generation: SpanView = {
    spanId: spanIdHex(g.id, "generation"),
    parentSpanId: parent,
    name: trace.generation_name || trace.trace_name || g.model,
    role: "generation",
    startMs: start,
    endMs: end,
    error: g.finishReason === "error" || (lastStatus !== null && lastStatus >= 400),
  };
  spans.push(generation);
  if (g.attempts.length > 1) {
    let at = start;
    g.attempts.forEach((a, i) => {
      const duration = Math.max(0, a.durationMs);
      spans.push({
        spanId: spanIdHex(g.id, `attempt-${i + 1}`),
        parentSpanId: generation.spanId,
        name: `provider attempt ${i + 1}: ${a.provider}`,
        role: "attempt",
        startMs: at,
        endMs: at + duration,
        error: a.status === null || a.status >= 400,
        attempt: { index: i + 1, provider: a.provider, model: a.model, status: a.status },
      });
      at += duration;
    });
  }
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(trace)) if (!TRACE_KEYS.has(key)) metadata[key] = value;
  return {
    g,
    traceId,
    traceName: trace.trace_name || "OpenRouter Request",
    spans,
    generation,
    metadata,
    input: g.content ? g.content.input.map(stripMultimodal) : null,
    output: g.content ? g.content.output : null,
    sessionId: g.requestContext?.sessionId ?? null,
    userId: g.identity?.externalUser ?? null,
    finishReason: g.finishReason,
  };
}

/** Seconds since the epoch, integer (S3 keys, some native APIs). */
export const unixSeconds = (ms: number): number => Math.floor(ms / 1000);

/** ISO 8601 with milliseconds, UTC. */
export const iso = (ms: number): string => new Date(ms).toISOString();
