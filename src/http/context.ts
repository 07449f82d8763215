import type { Redis } from "ioredis";
import type { Broadcaster, EncoderLookup } from "../broadcast/delivery/broadcaster.js";
import type { Config } from "../config/config.js";
import type { OutboxSignal } from "../broadcast/outbox/outbox-signal.js";
import type { AcceptedSink } from "../domain/ingest/pipeline/accepted-sink.js";
import type { FeedbackActivity } from "../domain/generation-feedback/feedback-activity.js";
import type { BatchPreparer } from "../domain/ingest/pipeline/preparer-port.js";
import type { Policy } from "../domain/policy/policy.js";
import type { Clock } from "../lib/clock.js";
import type { Gateway } from "../gateway/gateway.js";
import type { SecretBox } from "../lib/secret-box.js";
import type { ActivityStore } from "../stores/activity-store.js";
import type { RecordStore } from "../stores/record-store.js";
import type { GatehouseMetrics } from "../metrics/gatehouse-metrics.js";

/** Everything a route needs, built once by the composition root and passed in explicitly. */
export interface AppContext {
  config: Readonly<Config>;
  store: RecordStore;
  /**
   * Key and workspace policy from memory (src/domain/policy/). Whatever changes a key, workspace
   * or budget calls policy.keyChanged / workspaceChanged once the change is committed.
   */
  policy: Policy;
  /** Generations for analytics (DuckDB embedded, or ClickHouse). */
  activity: ActivityStore;
  clock: Clock;
  secretBox: SecretBox;
  /**
   * What happens to a batch ingest accepts with broadcast on (live ingest, the gateway's records):
   * Broadcast's outbox (src/broadcast/outbox/outbox-sink.ts), signalling `outboxSignal`.
   */
  accepted: AcceptedSink;
  /** This process's outbox signal: the Broadcaster waits on it; ingest (through `accepted`) and replay signal it. */
  outboxSignal: OutboxSignal;
  /** Where ingest bodies are parsed and validated (a worker pool); absent = inline. */
  preparer?: BatchPreparer;
  /** This process's Broadcast delivery worker, when it runs one (status shows its circuit breakers). */
  broadcaster?: Broadcaster;
  /** Encoders by destination type; default: src/broadcast/encoders (tests may substitute). */
  encoderFor?: EncoderLookup;
  /** Shared rate-limit state across instances; null = in-process. */
  redis: Redis | null;
  /**
   * The process's Prometheus metrics (GET /metrics), when GATEHOUSE_METRICS_TOKEN is set; built by
   * buildApp when absent (main.ts builds it first, for the Broadcast worker).
   */
  metrics?: GatehouseMetrics | null;
  /** The data plane; built by buildApp from the rest when absent. */
  gateway?: Gateway;
  /**
   * Writes queued feedback to the activity store (analytics): right after each submission, and in
   * the periodic passes main.ts starts. Built by buildApp when absent (then with no periodic pass).
   */
  feedbackActivity?: FeedbackActivity;
}
