import { nanoToUsd, usdToNano } from "../lib/money.js";
import {
  APPS,
  BYOK_FEE,
  CLASSIFIED_SHARE,
  COUNTRIES,
  DAILY_GROWTH,
  DATA_DISCOUNT,
  FAST_PROVIDERS,
  FAST_THROUGHPUT,
  FINISH_REASONS,
  GUARDRAIL_SHARE,
  hourWeight,
  LEGACY_SHARE,
  MODELS,
  NO_APP,
  PROMPT_CACHE_SHARE,
  RESPONSE_CACHED_SHARE,
  SENTIMENTS,
  USERS,
  WEB_SEARCH_SHARE,
  WEB_SEARCH_USD,
  WEEKEND_FACTOR,
  type AppSpec,
  type KeySpec,
  type ModelSpec,
  type WorkspaceSpec,
} from "./catalog.js";
import { Random } from "./random.js";

/** A key of the demo organization as the generator needs it. */
export interface DemoKey {
  hash: string;
  spec: KeySpec;
}

export interface DemoWorkspace {
  id: string;
  isDefault: boolean;
  spec: WorkspaceSpec;
  keys: readonly DemoKey[];
}

export interface DemoPlan {
  workspaces: readonly DemoWorkspace[];
  /** The demo classifier (dimensions `topic` and `sentiment`). */
  classifierId: string;
}

export interface GenerateOptions {
  seed: number;
  days: number;
  count: number;
  /** End of the period (exclusive), epoch ms; records spread over the `days` before it. */
  untilMs: number;
}

/** A generation record in the wire form of docs/generation-record.md. */
export type WireRecord = Record<string, unknown>;

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const MILLION = 1_000_000n;
const MODEL_BY_SLUG = new Map(MODELS.map((m) => [m.slug, m]));
const APP_BY_ID = new Map(APPS.map((a) => [a.id, a]));
const WEB_NANO = usdToNano(WEB_SEARCH_USD);

/** Price per million tokens in nano-USD, so that costs are exact integers. */
const PRICES = new Map(
  MODELS.map((m) => [
    m.slug,
    {
      input: usdToNano(m.input),
      output: usdToNano(m.output),
      cacheRead: m.cacheRead === null ? null : usdToNano(m.cacheRead),
    },
  ]),
);

/** A share of a nano amount, rounded to the nano. */
const share = (nano: bigint, fraction: number): bigint =>
  (nano * BigInt(Math.round(fraction * 1_000_000)) + 500_000n) / MILLION;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(v)));

/**
 * How many records each hour of the period gets: weights for the hour of the day (a European
 * morning and an American afternoon), weekends, growth over the period and some noise, turned into
 * integer counts that add up to exactly `count` (cumulative rounding). Partial hours at the ends
 * count in proportion.
 */
export function hourlyCounts(opts: GenerateOptions): { startMs: number; endMs: number; count: number }[] {
  const rng = new Random(opts.seed ^ 0x7f4a7c15);
  const start = opts.untilMs - opts.days * DAY_MS;
  const hours: { startMs: number; endMs: number; weight: number }[] = [];
  for (let h = Math.floor(start / HOUR_MS); h * HOUR_MS < opts.untilMs; h++) {
    const s = Math.max(start, h * HOUR_MS);
    const e = Math.min(opts.untilMs, (h + 1) * HOUR_MS);
    const at = new Date(h * HOUR_MS);
    const weekday = at.getUTCDay();
    const weekend = weekday === 0 || weekday === 6 ? WEEKEND_FACTOR : 1;
    const growth = 1 + DAILY_GROWTH * ((s - start) / DAY_MS);
    const noise = rng.logNormal(1, 0.15);
    hours.push({
      startMs: s,
      endMs: e,
      weight: hourWeight(at.getUTCHours()) * weekend * growth * noise * ((e - s) / HOUR_MS),
    });
  }
  const total = hours.reduce((a, h) => a + h.weight, 0);
  let cumulative = 0;
  let given = 0;
  return hours.map((h) => {
    cumulative += h.weight;
    const upTo = Math.round((cumulative / total) * opts.count);
    const count = upTo - given;
    given = upTo;
    return { startMs: h.startMs, endMs: h.endMs, count };
  });
}

/**
 * The demo's generation records, in time order, deterministic for a seed (and the same period):
 * ids `demo-<seed>-<n>`, so running the same demo again adds nothing (every record is a duplicate).
 */
export function* generateRecords(plan: DemoPlan, opts: GenerateOptions): Generator<WireRecord> {
  const rng = new Random(opts.seed);
  const workspaces = plan.workspaces.map((w) => [w, w.spec.weight] as const);
  let n = 0;
  for (const hour of hourlyCounts(opts)) {
    const times: number[] = [];
    for (let i = 0; i < hour.count; i++)
      times.push(hour.startMs + Math.floor(rng.next() * (hour.endMs - hour.startMs)));
    times.sort((a, b) => a - b);
    for (const at of times) {
      n += 1;
      yield record(rng, plan, rng.pick(workspaces), `demo-${opts.seed}-${n}`, at);
    }
  }
}

function record(rng: Random, plan: DemoPlan, ws: DemoWorkspace, id: string, atMs: number): WireRecord {
  const key = rng.pick(ws.keys.map((k) => [k, k.spec.weight] as const));
  const appId = rng.pick(ws.spec.apps);
  const app: Omit<AppSpec, "id" | "title"> = (appId !== null && APP_BY_ID.get(appId)) || NO_APP;
  const model = MODEL_BY_SLUG.get(rng.pick(ws.spec.models)) as ModelSpec;
  let variant: string | null = null;
  for (const [v, p] of model.variants) {
    if (rng.chance(p)) {
      variant = v;
      break;
    }
  }
  const provider = rng.pick(model.providers);
  const creator = USERS[key.spec.creator] ?? USERS[0];
  const user = rng.chance(0.7) ? creator : USERS[ws.spec.users[rng.int(0, ws.spec.users.length - 1)] ?? 0];

  const finish = rng.pick(FINISH_REASONS);
  const cancelled = finish === null;
  const prompt = clamp(rng.logNormal(app.prompt, 0.9), 20, 190_000);
  let visible = clamp(rng.logNormal(app.completion, 0.8), 1, 16_000);
  let reasoning =
    variant === "thinking" || rng.chance(model.reasoning) ? clamp(rng.logNormal(900, 0.9), 16, 32_000) : 0;
  if (finish === "error") {
    visible = 0;
    reasoning = 0;
  } else if (cancelled) {
    visible = Math.floor(visible * (0.05 + 0.55 * rng.next()));
  }
  const completion = visible + reasoning;
  const cached =
    model.cacheRead !== null && prompt >= 1024 && rng.chance(PROMPT_CACHE_SHARE)
      ? Math.floor(prompt * (0.3 + 0.6 * rng.next()))
      : 0;
  const responseCached = finish === "stop" && rng.chance(RESPONSE_CACHED_SHARE);
  const isByok = variant !== "free" && rng.chance(ws.spec.byok);
  const guardrail = finish === "content_filter" || rng.chance(GUARDRAIL_SHARE);

  // Cost from list prices, exact in nano-USD.
  const price = PRICES.get(model.slug) as NonNullable<ReturnType<typeof PRICES.get>>;
  const billed = variant !== "free" && !responseCached && finish !== "error";
  const cacheNano =
    billed && price.cacheRead !== null ? (BigInt(cached) * price.cacheRead + 500_000n) / MILLION : 0n;
  const inference = billed
    ? (BigInt(prompt - cached) * price.input + BigInt(completion) * price.output + 500_000n) / MILLION +
      cacheNano
    : 0n;
  const web = rng.chance(WEB_SEARCH_SHARE) ? WEB_NANO : 0n;
  const data =
    !isByok && inference > 0n && rng.chance(ws.spec.dataDiscount) ? -share(inference, DATA_DISCOUNT) : 0n;
  const usage = isByok ? share(inference, BYOK_FEE) + web : inference + web + data;

  const fast = FAST_PROVIDERS[provider] ?? 1;
  const tps = model.tokensPerSecond * (FAST_THROUGHPUT[provider] ?? 1);
  const latency = responseCached
    ? rng.int(15, 60)
    : Math.max(40, Math.round(rng.logNormal(model.latencyMs * fast, 0.45)));
  const generation = responseCached
    ? latency + rng.int(5, 40)
    : latency + Math.round((completion / tps) * 1000 * rng.logNormal(1, 0.2));

  const rec: WireRecord = {
    id,
    created_at: new Date(atMs).toISOString(),
    api_key_hash: key.hash,
    model: model.slug,
    provider,
    user_id: user?.id,
    user_name: user?.name,
    user_email: user?.email,
    origin: app.origin,
    finish_reason: finish,
    tokens_prompt: prompt,
    tokens_completion: completion,
    tokens_reasoning: reasoning,
    tokens_cached: cached,
    is_byok: isByok,
    usage: nanoToUsd(usage),
    byok_usage_inference: nanoToUsd(isByok ? inference : 0n),
    usage_upstream: nanoToUsd(inference),
    usage_cache: nanoToUsd(cacheNano),
    usage_web: nanoToUsd(web),
    usage_data: nanoToUsd(data),
    latency_ms: latency,
    generation_time_ms: generation,
    streamed: rng.chance(app.streamed),
    cancelled,
    response_cached: responseCached,
    guardrail_invoked: guardrail,
  };
  const country = rng.pick(COUNTRIES);
  if (country !== null) rec.country = country;
  if (variant !== null) rec.variant = variant;
  if (appId !== null) {
    rec.app_id = appId;
    rec.app_title = APP_BY_ID.get(appId)?.title;
  }
  if (ws.spec.externalUsers > 0 && rng.chance(ws.spec.externalUsers)) {
    rec.external_user = `cust_${String(rng.int(1, ws.spec.externalUserCount)).padStart(5, "0")}`;
  }
  if (ws.isDefault && rng.chance(LEGACY_SHARE)) rec.workspace_id = null;
  if (rng.chance(CLASSIFIED_SHARE)) {
    rec.classifications = [
      { classifier_id: plan.classifierId, dimension_name: "topic", value: rng.pick(app.topics) },
      { classifier_id: plan.classifierId, dimension_name: "sentiment", value: rng.pick(SENTIMENTS) },
    ];
  }
  return rec;
}
