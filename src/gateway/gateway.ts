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
import { ByokRouting } from "./byok/byok-routing.js";
import type { SecretBox } from "../lib/secret-box.js";

/** The data plane's long-lived parts, built once per process. */
export interface Gateway {
  config: GatewayConfig;
  catalog: Catalog;
  policy: GatewayPolicy;
  holds: Holds;
  recording: RecordingDeps;
  byok: ByokRouting;
  clock: Clock;
  close(): void;
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
      : new MemoryReservationStore(d.store.db, d.config.reservationTtlMs);
  const holds = new Holds(reservations, d.config.reservationTtlMs);
  return {
    config: d.config,
    catalog: d.catalog ?? buildCatalog(d.config),
    policy: d.policy,
    holds,
    recording: {
      store: d.store,
      activity: d.activity,
      clock: d.clock,
      preparer: d.preparer,
      ...(d.onLive ? { onLive: d.onLive } : {}),
    },
    byok: new ByokRouting(d.store.db, d.secretBox),
    clock: d.clock,
    close: () => holds.close(),
  };
}
