import type { Redis } from "ioredis";
import type { Config } from "../config/config.js";
import type { BatchPreparer } from "../domain/ingest/batch-preparer.js";
import type { Clock } from "../lib/clock.js";
import type { Gateway } from "../gateway/gateway.js";
import type { SecretBox } from "../lib/secret-box.js";
import type { ActivityStore } from "../stores/activity-store.js";
import type { RecordStore } from "../stores/record-store.js";

/** Everything a route needs, built once by the composition root and passed in explicitly. */
export interface AppContext {
  config: Readonly<Config>;
  store: RecordStore;
  /** Generations for analytics (DuckDB embedded, or ClickHouse). */
  activity: ActivityStore;
  clock: Clock;
  secretBox: SecretBox;
  /** Where ingest bodies are parsed and validated (a worker pool); absent = inline. */
  preparer?: BatchPreparer;
  /** Shared rate-limit state across instances; null = in-process. */
  redis: Redis | null;
  /** The data plane; built by buildApp from the rest when absent. */
  gateway?: Gateway;
}
