import type { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { OutboxSignal } from "../../src/broadcast/outbox/outbox-signal.js";
import { outboxSink } from "../../src/broadcast/outbox/outbox-sink.js";
import { loadConfig, type Config } from "../../src/config/config.js";
import type { BatchPreparer } from "../../src/domain/ingest/pipeline/preparer-port.js";
import { FeedbackActivity } from "../../src/domain/generation-feedback/feedback-activity.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { PolicyCache } from "../../src/domain/policy/policy-cache.js";
import { recordStoreLoader } from "../../src/domain/policy/policy-loader.js";
import type { Policy } from "../../src/domain/policy/policy.js";
import { buildApp, type BuildOptions } from "../../src/http/app.js";
import type { AppContext } from "../../src/http/context.js";
import { ManualClock, type Clock } from "../../src/lib/clock.js";
import { SecretBox } from "../../src/lib/secret-box.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import type { StoreFactory } from "./stores.js";

export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7);

/**
 * The operator's opt-in that lets destinations reach the tests' loopback receivers, as an operator
 * allows a local collector (BROADCAST_REFUSE_PRIVATE_ADDRESSES stays on, its default).
 */
export const ALLOW_LOOPBACK = { BROADCAST_ALLOWED_PRIVATE_HOSTS: "127.0.0.1/8,::1" } as const;

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  clock: ManualClock;
  /** Management key of the first organization. */
  key: string;
  organizationId: string;
  workspaceId: string;
  /** inject() with the management key unless `auth` is given (null = no header). */
  call(opts: InjectOptions & { auth?: string | null }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  store?: RecordStore;
  /** Activity store; default: a fresh in-memory DuckDB, closed by close(). */
  activity?: ActivityStore;
  clock?: Clock;
  env?: Record<string, string>;
  config?: Partial<Config>;
  logger?: BuildOptions["logger"];
  /** Shared rate-limit state (Redis); null/undefined = in-process. */
  redis?: Redis | null;
  /** Key and workspace policy; default: a policy cache with no change channel (one instance). */
  policy?: Policy;
  /** Where ingest bodies are prepared (a worker pool, owned by the caller); default: inline. */
  preparer?: BatchPreparer;
}

/** A real app on a real store (in-memory SQLite unless given), with one organization. */
export async function makeTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const ownStore = !opts.store;
  const store = opts.store ?? (await openSqliteStore(":memory:"));
  const ownActivity = !opts.activity;
  const activity = opts.activity ?? (await openDuckDbActivityStore({ path: ":memory:" }));
  const clock =
    (opts.clock as ManualClock | undefined) ?? new ManualClock(new Date("2026-11-18T12:00:00.000Z"));
  const config = {
    ...loadConfig({ GATEHOUSE_DATA_DIR: "/tmp/gatehouse-test", ...ALLOW_LOOPBACK, ...opts.env }),
    ...opts.config,
  };
  // Broadcasters a test starts on this app wait on ctx.outboxSignal (broadcast-helpers.ts).
  const outboxSignal = new OutboxSignal();
  const ctx: AppContext = {
    config,
    accepted: outboxSink(outboxSignal),
    outboxSignal,
    store,
    activity,
    clock,
    secretBox: new SecretBox(TEST_ENCRYPTION_KEY),
    redis: opts.redis ?? null,
    policy: opts.policy ?? new PolicyCache(recordStoreLoader(store.db), { channel: null }),
    // As main.ts wires it, without the periodic passes (a test runs one with drain()).
    feedbackActivity: new FeedbackActivity(store, activity),
    ...(opts.preparer ? { preparer: opts.preparer } : {}),
  };
  const app = await buildApp(ctx, { logger: opts.logger ?? false });
  const org = await createOrganization(store, clock, "Test organization");
  return {
    app,
    ctx,
    clock: clock,
    key: org.managementKey,
    organizationId: org.organizationId,
    workspaceId: org.workspaceId,
    call: ({ auth, headers, ...rest }) => {
      const key = auth === undefined ? org.managementKey : auth;
      return app.inject({
        ...rest,
        headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...headers },
      });
    },
    close: async () => {
      await app.close();
      await ctx.feedbackActivity?.stop();
      await ctx.policy.close();
      if (ownStore) await store.close();
      if (ownActivity) await activity.close();
    },
  };
}

/** A store opened by a StoreFactory, and an app on it. */
export interface AppOnStore {
  store: Awaited<ReturnType<StoreFactory["open"]>>;
  t: TestApp;
}

/**
 * In a describe block: opens the factory's store and a test app on it before the block's tests,
 * and closes both after them. The returned object is filled in by then (read `env.t`, `env.store`
 * inside tests and hooks, not at the block's top level).
 */
export function useAppOnStore(factory: StoreFactory): AppOnStore {
  const env = {} as AppOnStore;
  beforeAll(async () => {
    env.store = await factory.open();
    env.t = await makeTestApp({ store: env.store });
  });
  afterAll(async () => {
    await env.t?.close();
    await env.store?.dispose();
  });
  return env;
}
