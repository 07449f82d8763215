import { loadConfig, type BroadcastConfig } from "../../src/config/config.js";
import { Broadcaster, type BroadcastObserver } from "../../src/broadcast/delivery/broadcaster.js";
import { defaultEncoderLookup } from "../../src/broadcast/encoder-lookup.js";
import { systemClock } from "../../src/lib/clock.js";
import { hashKey } from "../../src/lib/ids.js";
import { ALLOW_LOOPBACK, makeTestApp, type TestApp, type TestAppOptions } from "../helpers/app.js";

/** Short, fast delivery settings for tests (the defaults are in config.ts). */
export function testSettings(over: Partial<BroadcastConfig> = {}): BroadcastConfig {
  return {
    ...loadConfig(ALLOW_LOOPBACK).broadcast,
    pollMs: 20,
    attemptTimeoutMs: 300,
    retryBaseMs: 10,
    retryMaxMs: 50,
    maxAttempts: 50,
    breakerThreshold: 1_000,
    breakerCooldownMs: 50,
    ...over,
  };
}

export interface BroadcastTestApp extends TestApp {
  broadcaster: Broadcaster;
}

/**
 * A test app on the real clock with a Broadcaster (not started) sharing its store; `observer`
 * is told of its sends and settlements (the metrics); `logger` is the app's, and the worker's.
 */
export async function makeBroadcastApp(
  over: Partial<BroadcastConfig> = {},
  observer?: BroadcastObserver,
  logger?: TestAppOptions["logger"],
): Promise<BroadcastTestApp> {
  const settings = testSettings(over);
  const t = await makeTestApp({
    clock: systemClock,
    config: { broadcast: settings },
    ...(logger ? { logger } : {}),
  });
  const broadcaster = new Broadcaster({
    store: t.ctx.store,
    secretBox: t.ctx.secretBox,
    clock: systemClock,
    settings,
    encoderFor: defaultEncoderLookup,
    outboxSignal: t.ctx.outboxSignal,
    ...(observer ? { observer } : {}),
  });
  if (logger) broadcaster.useLogger(t.app.log);
  t.ctx.broadcaster = broadcaster;
  const close = t.close;
  return Object.assign(t, {
    broadcaster,
    close: async () => {
      await broadcaster.stop();
      await close();
    },
  });
}

let n = 0;
/** Wire records for the app's management key, created an hour ago. */
export function records(
  t: TestApp,
  count: number,
  over: Record<string, unknown> = {},
): Record<string, unknown>[] {
  const createdAt = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
  return Array.from({ length: count }, () => {
    n += 1;
    return {
      id: `gen-bc-${process.pid}-${n}`,
      created_at: createdAt,
      api_key_hash: hashKey(t.key),
      model: "openai/gpt-4o",
      provider: "OpenAI",
      tokens_prompt: 100,
      tokens_completion: 20,
      usage: 0.001,
      latency_ms: 120,
      ...over,
    };
  });
}

export async function createWebhook(
  t: TestApp,
  url: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  config: Record<string, unknown> = {},
): Promise<string> {
  const res = await t.call({
    method: "POST",
    url: "/api/v1/observability/destinations",
    payload: { type: "webhook", name: "hook", config: { url, headers, ...config }, ...extra },
  });
  if (res.statusCode !== 201) throw new Error(`create destination: ${res.statusCode} ${res.body}`);
  return res.json<{ data: { id: string } }>().data.id;
}

export async function ingestRecords(t: TestApp, recs: unknown[]): Promise<void> {
  const res = await t.call({
    method: "POST",
    url: "/api/v1/activity/generations",
    payload: { generations: recs },
  });
  if (res.statusCode !== 200) throw new Error(`ingest: ${res.statusCode} ${res.body}`);
}

export async function deliveries(t: TestApp, id: string): Promise<Record<string, unknown>> {
  const res = await t.call({ method: "GET", url: `/api/v1/observability/destinations/${id}/deliveries` });
  if (res.statusCode !== 200) throw new Error(`deliveries: ${res.statusCode} ${res.body}`);
  return res.json<{ data: Record<string, unknown> }>().data;
}
