import type { GatewayConfig } from "../config/config.js";
import type { Clock } from "../lib/clock.js";
import type { RecordStore } from "../stores/record-store.js";
import type { ActivityStore } from "../stores/activity-store.js";
import type { BatchPreparer } from "../domain/ingest/pipeline/preparer-port.js";
import type { AcceptedSink } from "../domain/ingest/pipeline/accepted-sink.js";
import { buildCatalog } from "./catalog/build-catalog.js";
import type { Catalog } from "./catalog/catalog.js";
import { Holds } from "./reservations/hold.js";
import type { GatewayPolicy } from "./inference-auth.js";
import { MemoryReservationStore } from "./reservations/memory-store.js";
import { PostgresReservationStore } from "./reservations/postgres-store.js";
import type { RecordingDeps } from "./recording/record-generation.js";
import { GenerationRecorder } from "./recording/generation-recorder.js";
import { RecordingJournal } from "./recording/journal.js";
import { FailedRecords } from "./recording/failed-records.js";
import { PeriodicPass } from "../lib/periodic-pass.js";
import { InFlight } from "./in-flight.js";
import { InFlightLimits } from "./fair-use/in-flight-limits.js";
import { ByokRouting } from "./byok/byok-routing.js";
import type { SecretBox } from "../lib/secret-box.js";
import type { GatewayObserver } from "./observer.js";
import { ContentLogger } from "./content-log/content-logger.js";

/**
 * How often the records that failed after their answers are tried again (a SQLite store busy past
 * its timeout, say, while a CLI command holds its write lock).
 */
export const RECORD_RETRY_MS = 5_000;

/** The data plane's long-lived parts, built once per process. */
export interface Gateway {
  config: GatewayConfig;
  catalog: Catalog;
  policy: GatewayPolicy;
  holds: Holds;
  recording: RecordingDeps;
  /** Group commit of finished generations (recorder.ts). */
  recorder: GenerationRecorder;
  /** Keeps the content of the generations whose workspace has IO logging on (content-logger.ts). */
  contentLog: ContentLogger;
  /**
   * Durable recording on a store this process owns (journal.ts): answers wait for their journal
   * append, not their commit. Null where durable answers wait for the commit (PostgreSQL), and
   * with deferred recording.
   */
  journal: RecordingJournal | null;
  /**
   * Whether an answer may be sent before its record commits (deferred recording, or a journal):
   * then every other request on this instance first waits for the records of the answers sent.
   */
  answersBeforeCommit: boolean;
  /**
   * Records what the journal holds from an earlier process (journal.ts `replay`), before the
   * instance serves anything; refusals are reported to `refused`. Free without a journal.
   */
  recover(
    refused: (err: unknown, generationId: string) => void,
  ): Promise<{ recorded: number; refused: number }>;
  /** Records that failed after their answer was sent, waiting for the retry pass (failed-records.ts). */
  failedRecords: FailedRecords;
  /**
   * Starts retrying, every RECORD_RETRY_MS, the records that failed after their answers
   * (`failedRecords`; a journaled one's entry is released once it is committed): a refusal goes to
   * `refused`, a pass that fails (the store still down) to `failed`. Call it after `recover`.
   */
  startRecordRetries(
    refused: (err: unknown, generationId: string) => void,
    failed: (err: unknown) => void,
  ): void;
  /** The model requests this instance is serving (the chat route tracks them). */
  inFlight: InFlight;
  /** Fair use of the upstreams: requests in flight per key and per workspace at a provider. */
  limits: InFlightLimits;
  byok: ByokRouting;
  clock: Clock;
  /** Told of every attempt and served generation (the process's metrics); null = none. */
  observer: GatewayObserver | null;
  /** Where trouble no request sees is reported (the app's logger): the reservation store's. */
  onWarning(listener: (message: string) => void): void;
  /** Stores the generations still queued (and their logged content), then stops renewing holds. */
  close(): Promise<void>;
}

export interface GatewayDeps {
  config: GatewayConfig;
  store: RecordStore;
  activity: ActivityStore;
  clock: Clock;
  secretBox: SecretBox;
  preparer?: BatchPreparer | undefined;
  /** Where recorded batches go once accepted: Broadcast's outbox (AppContext.accepted). */
  accepted: AcceptedSink;
  catalog?: Catalog;
  /** Key and workspace policy: the process's policy cache (AppContext.policy). */
  policy: GatewayPolicy;
  onLive?: RecordingDeps["onLive"];
  observer?: GatewayObserver | null;
}

export function createGateway(d: GatewayDeps): Gateway {
  // Shared holds need row locks (the workspace row, FOR UPDATE): a capability, not an engine name.
  const reservations =
    d.config.reservations === "postgres" && d.store.caps.supportsForUpdate
      ? new PostgresReservationStore(d.store, d.config.reservationTtlMs, {
          vacuumRows: d.config.reservationVacuumRows,
        })
      : new MemoryReservationStore(d.store, d.config.reservationTtlMs);
  const holds = new Holds(reservations, d.config.reservationTtlMs);
  const contentLog = new ContentLogger({ db: d.store.db, policy: d.policy, secretBox: d.secretBox });
  const onLive = d.onLive;
  const recording: RecordingDeps = {
    store: d.store,
    activity: d.activity,
    clock: d.clock,
    preparer: d.preparer,
    accepted: d.accepted,
    onLive: onLive
      ? (org, id, live, origin) => {
          contentLog.onLive(org, id, live, origin);
          onLive(org, id, live, origin);
        }
      : contentLog.onLive,
  };
  const inFlight = new InFlight();
  // Durable on a store this process owns: journaled answers, commits after them.
  const journal =
    d.config.recording === "durable" && d.store.journalDir !== undefined
      ? RecordingJournal.open(d.store.journalDir)
      : null;
  // No answer waits for a commit (deferred, journaled): every flush gathers. Durable on a shared
  // store: a flush waits a little only for requests in flight that will record soon.
  const gathers = d.config.recording === "deferred" || journal !== null;
  const recorder = new GenerationRecorder(recording, {
    gatherMs: gathers ? d.config.recordingGatherMs : 0,
    commitDelayMs: gathers ? 0 : d.config.recordingCommitDelayMs,
    inFlight: () => inFlight.size,
    maxQueued: d.config.recordingMaxQueued,
  });
  const byok = new ByokRouting(d.store.db, d.secretBox);
  const failedRecords = new FailedRecords();
  const retries = new PeriodicPass(RECORD_RETRY_MS);
  return {
    config: d.config,
    catalog: d.catalog ?? buildCatalog(d.config),
    policy: d.policy,
    holds,
    recording,
    recorder,
    contentLog,
    journal,
    answersBeforeCommit: gathers,
    recover: async (refused) => (journal ? journal.replay(recording, refused) : { recorded: 0, refused: 0 }),
    failedRecords,
    startRecordRetries: (refused, failed) => {
      retries.onFailure(failed);
      void retries.start(() => failedRecords.retry(recording, refused, (ids) => journal?.release(...ids)));
    },
    inFlight,
    limits: new InFlightLimits({
      maxPerKey: d.config.maxInFlightPerKey,
      workspaceSharePct: d.config.workspaceProviderSharePct,
    }),
    byok,
    clock: d.clock,
    observer: d.observer ?? null,
    onWarning: (listener) => {
      reservations.onWarning(listener);
      byok.onWarning(listener);
    },
    close: async () => {
      await retries.stop();
      await recorder.close();
      await contentLog.idle();
      await journal?.close();
      holds.close();
      await reservations.close();
    },
  };
}
