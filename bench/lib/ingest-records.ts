/**
 * Realistic generation records for the ingest benchmark: several keys, users with labels, apps
 * with titles, a mix of models and providers, BYOK, cost components, streaming and classifier
 * tags on about a third of the records. Deterministic for a given seed; created_at advances
 * through the last hour like a live gateway's stream.
 */
export interface RecordSpace {
  keyHashes: readonly string[];
  /** Prefix of every id (unique per run, so that nothing is a duplicate unless meant to be). */
  idPrefix: string;
  /** created_at of the first record (ms); each record is a little later than the previous one. */
  startMs: number;
}

const MODELS = [
  ["openai/gpt-4o", "OpenAI"],
  ["openai/gpt-4o-mini", "OpenAI"],
  ["anthropic/claude-sonnet-4", "Anthropic"],
  ["anthropic/claude-3.5-haiku", "Amazon Bedrock"],
  ["google/gemini-2.5-pro", "Google Vertex"],
  ["google/gemini-2.5-flash", "Google AI Studio"],
  ["deepseek/deepseek-chat", "DeepInfra"],
  ["meta-llama/llama-3.3-70b-instruct", "Together"],
  ["mistralai/mistral-large", "Mistral"],
  ["qwen/qwen3-235b-a22b", "Fireworks"],
] as const;
const COUNTRIES = ["US", "DE", "GB", "FR", "IN", "BR", "JP", "CA", "NL", "SG"];
const FINISH = ["stop", "stop", "stop", "stop", "length", "tool_calls", "stop", "content_filter", "error"];
const ORIGINS = ["https://app.example.com", "api", "https://chat.example.org", "https://ide.example.dev"];
const TOPICS = ["coding", "billing", "support", "sales", "writing"];
const CLASSIFIER = "11111111-1111-4111-8111-111111111111";

/** Small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
/** A price-like amount in USD with up to 9 decimals. */
const usd = (r: () => number, scale: number): number => Math.round(r() * scale * 1e9) / 1e9;

/** Records [from, from + n) of the space, as wire objects. */
export function makeRecords(space: RecordSpace, from: number, n: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = from; i < from + n; i++) {
    const r = rng(i * 7919 + 17);
    const [model, provider] = pick(r, MODELS);
    const user = Math.floor(r() * 200);
    const app = 1 + Math.floor(r() * 12);
    const prompt = Math.floor(r() * r() * 40_000);
    const completion = Math.floor(r() * 2_000);
    const byok = r() < 0.1;
    const inference = usd(r, 0.05);
    const rec: Record<string, unknown> = {
      id: `${space.idPrefix}-${i}`,
      created_at: new Date(space.startMs + i * 3).toISOString().replace(/\.\d+Z$/, "Z"),
      api_key_hash: pick(r, space.keyHashes),
      model,
      provider,
      app_id: app,
      app_title: `App ${app}`,
      user_id: `user_${user}`,
      origin: pick(r, ORIGINS),
      country: pick(r, COUNTRIES),
      finish_reason: pick(r, FINISH),
      tokens_prompt: prompt,
      tokens_completion: completion,
      tokens_reasoning: r() < 0.2 ? Math.floor(completion / 2) : 0,
      tokens_cached: r() < 0.3 ? Math.floor(prompt / 3) : 0,
      is_byok: byok,
      usage: byok ? usd(r, 0.002) : inference,
      byok_usage_inference: byok ? inference : 0,
      usage_upstream: inference,
      usage_cache: r() < 0.3 ? usd(r, 0.001) : 0,
      latency_ms: 80 + Math.floor(r() * 2_500),
      generation_time_ms: 200 + Math.floor(r() * 30_000),
      streamed: r() < 0.7,
      cancelled: r() < 0.02,
    };
    if (r() < 0.3) {
      rec.user_name = `User ${user}`;
      rec.user_email = `user${user}@example.com`;
    }
    if (r() < 0.05) rec.variant = "free";
    if (r() < 0.25) rec.external_user = `end-user-${Math.floor(r() * 5_000)}`;
    if (r() < 0.02) rec.response_cached = true;
    if (i % 3 === 0) {
      rec.classifications = [{ classifier_id: CLASSIFIER, dimension_name: "topic", value: pick(r, TOPICS) }];
    }
    out.push(rec);
  }
  return out;
}

/** One JSON request body per batch. */
export function makeBodies(space: RecordSpace, batches: number, size: number, firstBatch = 0): string[] {
  return Array.from({ length: batches }, (_, b) =>
    JSON.stringify({ generations: makeRecords(space, (firstBatch + b) * size, size) }),
  );
}
