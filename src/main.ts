import { join } from "node:path";
import { Redis } from "ioredis";
import { ConfigError, loadConfig } from "./config/config.js";
import { bootstrap } from "./domain/organizations/bootstrap.js";
import { GatehouseMetrics } from "./metrics/gatehouse-metrics.js";
import { buildApp } from "./http/app.js";
import { LogDestination, loggerOptions } from "./http/logger.js";
import { systemClock } from "./lib/clock.js";
import { SecretBox, loadEncryptionKey } from "./lib/secret-box.js";
import { keepNewFilesPrivate, restrictDataDir } from "./lib/private-files.js";
import { drainIngestBuffer, startIngestBuffer } from "./domain/ingest/pipeline/ingest-buffer.js";
import { ingestPreparerFor } from "./domain/ingest/workers/prepare-pool.js";
import { Broadcaster } from "./broadcast/delivery/broadcaster.js";
import { OutboxSignal } from "./broadcast/outbox/outbox-signal.js";
import { outboxSink } from "./broadcast/outbox/outbox-sink.js";
import { defaultEncoderLookup } from "./broadcast/encoder-lookup.js";
import { PolicyCache } from "./domain/policy/policy-cache.js";
import { recordStoreLoader } from "./domain/policy/policy-loader.js";
import { isActivityLockError, openActivityStore } from "./stores/open-activity-store.js";
import { holdActivityStoreLock } from "./stores/postgres/instance-lock.js";
import { warmUp } from "./warm-up.js";
import { pgPolicyChannel } from "./stores/postgres/pg-policy-channel.js";
import { sqliteChangeChannel } from "./stores/sqlite/sqlite-change-channel.js";
import { openRecordStore } from "./stores/open-record-store.js";
import { startContentSweep } from "./gateway/content-log/content-sweep.js";
import { FeedbackActivity } from "./domain/generation-feedback/feedback-activity.js";
import { PendingActivity } from "./domain/ingest/pipeline/pending-activity.js";

/** Longest a request waits on Redis before it is served without a rate limit (fail open). */
const REDIS_COMMAND_TIMEOUT_MS = 500;

/** Composition root: load config → open stores → bootstrap → build app → listen. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gatehouse: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  keepNewFilesPrivate();
  const notPrivate = restrictDataDir(config.dataDir);
  const store = await openRecordStore(config);
  // A Redis that refuses connections fails each command at once (no offline queue); one that stops
  // answering would hold every rate-limited request, so each command also has a deadline.
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, {
        maxRetriesPerRequest: 2,
        enableOfflineQueue: false,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      })
    : null;
  redis?.on("error", () => undefined); // surfaced by /readyz; reconnects on its own
  // The server's logger once it exists; events before it (a lock lost, a channel's state) go unlogged.
  let log: {
    error(o: object, m: string): void;
    warn(o: object, m: string): void;
    info(o: object, m: string): void;
  } | null = null;
  // Instances sharing a PostgreSQL record store must share the activity store (ClickHouse).
  const instanceLock =
    config.databaseUrl && !config.allowSplitAnalytics
      ? await holdActivityStoreLock(config.databaseUrl, config.clickhouseUrl === null, {
          onEvent: (event) => {
            if (event.kind === "lost")
              log?.warn({}, "activity store instance lock lost with its connection: taking it again");
            else if (event.kind === "regained") log?.info({}, "activity store instance lock taken again");
            else
              log?.error({ reason: event.message }, "activity store instance lock taken by another instance");
          },
        }).catch(async (err: unknown) => {
          await store.close();
          throw err;
        })
      : null;
  let activity;
  try {
    activity = await openActivityStore(config);
  } catch (err) {
    await store.close();
    await instanceLock?.release();
    if (isActivityLockError(err)) {
      throw new Error(
        `the activity store ${join(config.dataDir, "activity.duckdb")} is in use by another process ` +
          "(another server, or a gatehouse CLI command, on this GATEHOUSE_DATA_DIR): a DuckDB file can " +
          "be opened by one process only. Stop the other process, or give this instance its own " +
          "GATEHOUSE_DATA_DIR (and, to share analytics between instances, CLICKHOUSE_URL)",
      );
    }
    throw err;
  }
  const secretBox = new SecretBox(loadEncryptionKey(config.encryptionKey, config.dataDir));
  const clock = systemClock;
  const boot = await bootstrap(store, clock, config.bootstrapKey);
  // Policy changes made by other instances arrive over LISTEN/NOTIFY (PostgreSQL); with SQLite the
  // only other writer is the CLI, seen by polling the file's data_version. Until the channel
  // listens, every lookup reads the record store.
  const policy = new PolicyCache(recordStoreLoader(store.db), {
    channel:
      store.caps.changeNotifications && config.databaseUrl
        ? pgPolicyChannel(config.databaseUrl, {
            onEvent: (event, err) =>
              event === "lost"
                ? log?.warn({ err }, "policy change channel lost: policy cache dropped, reconnecting")
                : log?.info({}, "policy change channel listening"),
          })
        : store.dataVersion
          ? sqliteChangeChannel(store.dataVersion)
          : null,
  });
  // Batches an earlier process accepted and did not write to the embedded store are written now.
  if (activity.exclusive) {
    await startIngestBuffer(store, activity.exclusive, { flushLingerMs: config.ingestFlushLingerMs });
  }
  const preparer = ingestPreparerFor(config.ingestWorkers, activity);
  await warmUp({ preparer, workers: config.ingestWorkers, activity });
  // Prometheus metrics (GET /metrics) only when a token for them is configured.
  const metrics = config.metricsToken ? new GatehouseMetrics() : null;
  // Ingest hands accepted batches to Broadcast's outbox through its port; one signal wakes this
  // process's worker after each outbox write.
  const outboxSignal = new OutboxSignal();
  const accepted = outboxSink(outboxSignal);
  const broadcaster = config.broadcast.workers
    ? new Broadcaster({
        store,
        secretBox,
        clock,
        settings: config.broadcast,
        encoderFor: defaultEncoderLookup,
        outboxSignal,
        ...(metrics ? { observer: metrics } : {}),
      })
    : null;
  // Feedback reaches analytics from the record store's queue (docs/content-logging.md "Counting it").
  const feedbackActivity = new FeedbackActivity(store, activity);
  // Generations accepted while a shared activity store (ClickHouse) was down reach it from the
  // record store (src/domain/ingest/pipeline/pending-activity.ts); DuckDB has its ingest buffer.
  const pendingActivity = activity.exclusive ? null : new PendingActivity(store, activity);
  // stdout, buffered (src/http/logger.ts); flushed once the server listens.
  const logOut = new LogDestination();
  const app = await buildApp(
    {
      config,
      store,
      policy,
      activity,
      clock,
      secretBox,
      redis,
      metrics,
      accepted,
      outboxSignal,
      feedbackActivity,
      ...(preparer ? { preparer } : {}),
      ...(broadcaster ? { broadcaster } : {}),
    },
    { logger: loggerOptions(config, logOut) },
  );
  log = app.log;
  if (notPrivate.length > 0) {
    app.log.warn(
      { paths: notPrivate },
      "these data files could not be made private to Gatehouse's user (chmod go-rwx them)",
    );
  }
  if (broadcaster) {
    broadcaster.useLogger(app.log);
    broadcaster.start();
  }
  // Feedback an earlier process (or another instance) queued and did not write: now, before the
  // first request, and then periodically.
  await feedbackActivity.start();
  pendingActivity?.onFailure((err) =>
    app.log.warn({ err }, "generations accepted while the activity store was down not written yet (retried)"),
  );
  await pendingActivity?.start();
  // Logged generation content past its retention is deleted (docs/content-logging.md "Retention").
  const contentSweep = startContentSweep({
    db: store.db,
    clock,
    retentionMs: config.contentRetentionDays * 86_400_000,
    onError: (err) => app.log.warn({ err }, "generation content sweep failed (retried in an hour)"),
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, "shutting down");
    // The backstop if something hangs: the model requests' grace period, then 15 s for the rest.
    const force = setTimeout(() => process.exit(1), config.gateway.shutdownGraceMs + 15_000);
    force.unref();
    void (async () => {
      await app.close();
      await contentSweep.stop();
      await feedbackActivity.stop();
      await pendingActivity?.stop();
      await broadcaster?.stop();
      await preparer?.close();
      await policy.close();
      // Accepted batches still buffered are written now (or by the next start if this fails).
      if (activity.exclusive) await drainIngestBuffer(store, activity.exclusive).catch(() => undefined);
      await store.close();
      await activity.close();
      await instanceLock?.release();
      redis?.disconnect();
      process.exit(0);
    })();
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));

  await app.listen({ host: config.host, port: config.port });
  const host = config.host.includes(":") ? `[${config.host}]` : config.host; // IPv6 literal
  const base = `http://${host}:${(app.server.address() as { port: number }).port}/api/v1`;
  if (boot.generatedKey) {
    // Printed once, outside the logger, so that it never lands in structured logs.
    process.stdout.write(
      [
        "",
        "==================================================================",
        " Gatehouse: first start. A management key was created for you.",
        " It is shown only this once; store it somewhere safe:",
        "",
        `   ${boot.generatedKey}`,
        "",
        ` Try: curl -H "Authorization: Bearer <key>" ${base}/workspaces`,
        "==================================================================",
        "",
      ].join("\n"),
    );
  }
  app.log.info(
    { base, store: store.caps.name, activity: activity.dialect, redis: Boolean(redis) },
    "gatehouse listening",
  );
  // Log lines are buffered (src/http/logger.ts); the startup lines are written at once.
  logOut.flush();
}

/** The message and its causes: "record store migration failed: connect ECONNREFUSED ...". */
function describeFailure(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.message) parts.push(e.message);
  }
  return parts.join(": ") || String(err);
}

main().catch((err: unknown) => {
  process.stderr.write(`gatehouse: failed to start: ${describeFailure(err)}\n`);
  process.exit(1);
});
