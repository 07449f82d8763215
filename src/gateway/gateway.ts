import type { GatewayConfig } from "../config/config.js";
import type { Clock } from "../lib/clock.js";
import type { RecordStore } from "../stores/record-store.js";
import type { ActivityStore } from "../stores/activity-store.js";
import type { BatchPreparer } from "../domain/ingest/pipeline/preparer-port.js";
import { buildCatalog } from "./catalog/build-catalog.js";
import type { Catalog } from "./catalog/catalog.js";
import { Holds } from "./hold.js";
import type { GatewayPolicy } from "./policy.js";
import { MemoryReservationStore } from "./reservations/memory-store.js";
import { PostgresReservationStore } from "./reservations/postgres-store.js";
import type { RecordingDeps } from "./recording.js";
import { GenerationRecorder } from "./recorder.js";
import { InFlight } from "./in-flight.js";
import { ByokRouting } from "./byok/byok-routing.js";
import type { SecretBox } from "../lib/secret-box.js";

/** The data plane's long-lived parts, built once per process. */
export interface Gateway {
  config: GatewayConfig;
  catalog: Catalog;
  policy: GatewayPolicy;
  holds: Holds;
  recording: RecordingDeps;
  /** Group commit of finished generations (recorder.ts). */
  recorder: GenerationRecorder;
  /** The model requests this instance is serving (the chat route tracks them). */
  inFlight: InFlight;
  byok: ByokRouting;
  clock: Clock;
  /** Stores the generations still queued, then stops renewing holds. */
  close(): Promise<void>;
}

export interface GatewayDeps {
  config: GatewayConfig;
  store: RecordStore;
  activity: ActivityStore;
  clock: Clock;
  secretBox: SecretBox;
  preparer?: BatchPreparer | undefined;
  catalog?: Catalog;
  /** Key and workspace policy: the process's policy cache (AppContext.policy). */
  policy: GatewayPolicy;
  onLive?: RecordingDeps["onLive"];
}

export function createGateway(d: GatewayDeps): Gateway {
  // Shared holds need row locks (the workspace row, FOR UPDATE): a capability, not an engine name.
  const reservations =
    d.config.reservations === "postgres" && d.store.caps.supportsForUpdate
      ? new PostgresReservationStore(d.store, d.config.reservationTtlMs)
      : new MemoryReservationStore(d.store, d.config.reservationTtlMs);
  const holds = new Holds(reservations, d.config.reservationTtlMs);
  const recording: RecordingDeps = {
    store: d.store,
    activity: d.activity,
    clock: d.clock,
    preparer: d.preparer,
    ...(d.onLive ? { onLive: d.onLive } : {}),
  };
  const inFlight = new InFlight();
  // Deferred: every flush gathers (no answer waits for it). Durable: a flush waits a little only
  // for requests in flight that will record soon.
  const deferred = d.config.recording === "deferred";
  const recorder = new GenerationRecorder(recording, {
    gatherMs: deferred ? d.config.recordingGatherMs : 0,
    commitDelayMs: deferred ? 0 : d.config.recordingCommitDelayMs,
    inFlight: () => inFlight.size,
    maxQueued: d.config.recordingMaxQueued,
  });
  return {
    config: d.config,
    catalog: d.catalog ?? buildCatalog(d.config),
    policy: d.policy,
    holds,
    recording,
    recorder,
    inFlight,
    byok: new ByokRouting(d.store.db, d.secretBox),
    clock: d.clock,
    close: async () => {
      await recorder.close();
      holds.close();
    },
  };
}
