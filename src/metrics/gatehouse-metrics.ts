import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { BroadcastObserver } from "../broadcast/delivery/broadcaster.js";
import type { BroadcastBacklog, BroadcastOutbox } from "../broadcast/operations/delivery-status.js";
import type { GatewayObserver } from "../gateway/observer.js";
import type { ServedGeneration } from "../gateway/recording/record-generation.js";
import { collectProcessMetrics } from "./process-metrics.js";
import { Tallies } from "./tallies.js";
import { within } from "../lib/within.js";

/** What the process's gauges read when scraped. */
export interface MetricsSources {
  /** Model requests this instance is serving. */
  inFlight(): number;
  /** Generations answered and waiting for their record's commit. */
  recordingQueued(): number;
  /** Model requests this instance has at each provider (every provider that has had one). */
  providersInFlight?(): Iterable<{ provider: string; inFlight: number }>;
  /** Model requests refused before anything was reserved or forwarded, by reason, since the start. */
  refusals?(): Readonly<Record<string, number>>;
  /**
   * Broadcast's backlog across organizations, a record-store read: pending generations by
   * destination type, and the outbox's batches not yet fanned out to them.
   */
  broadcastBacklog?(): Promise<BroadcastBacklogRead>;
  /** A store read failed or did not answer in time: its gauges are left out of that scrape. */
  readFailed?(source: string, err: unknown): void;
}

/** What one read of Broadcast's backlog gives the gauges of a scrape. */
export interface BroadcastBacklogRead {
  byType: readonly BroadcastBacklog[];
  outbox: BroadcastOutbox;
}

/**
 * How long a scrape waits for a record-store read (like /readyz's READINESS_CHECK_TIMEOUT_MS):
 * well inside Prometheus' default 10 s scrape timeout, so a stalled store costs its gauges, not
 * the whole exposition.
 */
export const STORE_READ_TIMEOUT_MS = 2_000;

const HTTP_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const OVERHEAD_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
const FIRST_TOKEN_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];

const TOKEN_TYPES = ["prompt", "completion", "cached", "reasoning"] as const;
type TokenType = (typeof TOKEN_TYPES)[number];

/** A counter whose value is set from running totals when scraped (tallies.ts says why). */
function talliedCounter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  read: (add: (labels: Record<L, string>, value: number) => void) => void,
): void {
  new Counter<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      read((labels, value) => this.inc(labels, value));
    },
  });
}

/**
 * An unlabelled gauge set from a read at each scrape, left out of a scrape whose read gave null
 * (failed or late), as the labelled backlog gauges are. prom-client always shows an unlabelled
 * gauge (0 after a reset), which would read as an empty outbox while the store is down.
 */
function readGauge(registry: Registry, name: string, help: string, read: () => Promise<number | null>): void {
  let value: number | null = null;
  new (class extends Gauge {
    override async get() {
      const got = await super.get();
      return value === null ? { ...got, values: [] } : got;
    }
  })({
    name,
    help,
    registers: [registry],
    async collect() {
      value = await read();
      this.set(value ?? 0);
    },
  });
}

/**
 * The process's Prometheus metrics (docs/operations.md "Metrics"): HTTP requests by route and
 * status, the data plane's upstream attempts, generations, tokens, cost, time to first token and
 * overhead by model and provider, recording and Broadcast delivery, and Node's process metrics.
 * Aggregates of this instance, except Broadcast's backlog, which is read from the shared record
 * store at each scrape (through MetricsSources: no SQL here). No organization, workspace, key or
 * user appears in a label.
 */
export class GatehouseMetrics implements GatewayObserver, BroadcastObserver {
  readonly registry = new Registry();

  private readonly http = new Tallies<"method" | "route" | "status_code", "n">(["n"]);
  private readonly httpSeconds: Histogram<"method" | "route">;
  private readonly attempts = new Tallies<"provider" | "model" | "status", "n">(["n"]);
  private readonly served = new Tallies<
    "provider" | "model",
    TokenType | "completed" | "error" | "cancelled" | "creditsNano" | "byokNano"
  >([...TOKEN_TYPES, "completed", "error", "cancelled", "creditsNano", "byokNano"]);
  private readonly firstToken: Histogram<"provider" | "streamed">;
  private readonly overhead: Histogram;
  private recordFailures = 0;
  /** Refusals the data plane reports (holds); the in-flight limits' come from the sources. */
  private readonly refusals = new Map<string, number>();
  private readonly sends = new Tallies<"destination_type" | "status", "n">(["n"]);
  private readonly settles = new Tallies<"destination_type" | "outcome", "n">(["n"]);
  private sources: MetricsSources | null = null;
  private readonly storeReadTimeoutMs: number;
  /** The backlog read in flight, shared by the gauges of a scrape and by concurrent scrapes. */
  private backlogRead: Promise<BroadcastBacklogRead> | null = null;
  /** The last read whose failure was reported (readFailed). */
  private backlogReported: Promise<unknown> | null = null;

  constructor(opts: { storeReadTimeoutMs?: number } = {}) {
    this.storeReadTimeoutMs = opts.storeReadTimeoutMs ?? STORE_READ_TIMEOUT_MS;
    const registry = this.registry;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the gauges' collect() has its own `this`
    const metrics = this;
    collectProcessMetrics(registry);
    talliedCounter(
      registry,
      "gatehouse_http_requests_total",
      "HTTP requests answered, by method, route pattern and status code.",
      ["method", "route", "status_code"],
      (add) => {
        for (const { labels, values } of this.http.entries()) add(labels, values.n);
      },
    );
    this.httpSeconds = new Histogram({
      name: "gatehouse_http_request_duration_seconds",
      help: "Time from a request's arrival to its answer's end, by method and route pattern.",
      labelNames: ["method", "route"],
      buckets: HTTP_SECONDS,
      registers: [registry],
    });
    talliedCounter(
      registry,
      "gatehouse_gateway_upstream_attempts_total",
      "Upstream attempts of model requests, by provider, model and HTTP status (none: no answer).",
      ["provider", "model", "status"],
      (add) => {
        for (const { labels, values } of this.attempts.entries()) add(labels, values.n);
      },
    );
    talliedCounter(
      registry,
      "gatehouse_gateway_generations_total",
      "Generations served and recorded, by provider, model and outcome (completed, error after output, cancelled).",
      ["provider", "model", "outcome"],
      (add) => {
        for (const { labels, values } of this.served.entries()) {
          for (const outcome of ["completed", "error", "cancelled"] as const) {
            add({ ...labels, outcome }, values[outcome]);
          }
        }
      },
    );
    talliedCounter(
      registry,
      "gatehouse_gateway_tokens_total",
      "Tokens of served generations, by provider, model and type (cached and reasoning are parts of prompt and completion).",
      ["provider", "model", "type"],
      (add) => {
        for (const { labels, values } of this.served.entries()) {
          for (const type of TOKEN_TYPES) add({ ...labels, type }, values[type]);
        }
      },
    );
    talliedCounter(
      registry,
      "gatehouse_gateway_cost_usd_total",
      "Cost of served generations in USD, by provider, model and who pays (credits: key usage; byok: the organization's provider key).",
      ["provider", "model", "billed_to"],
      (add) => {
        for (const { labels, values } of this.served.entries()) {
          add({ ...labels, billed_to: "credits" }, values.creditsNano / 1e9);
          add({ ...labels, billed_to: "byok" }, values.byokNano / 1e9);
        }
      },
    );
    this.firstToken = new Histogram({
      name: "gatehouse_gateway_time_to_first_token_seconds",
      help: "Time from a model request's arrival to the upstream's first token, by provider and whether it streamed.",
      labelNames: ["provider", "streamed"],
      buckets: FIRST_TOKEN_SECONDS,
      registers: [registry],
    });
    this.overhead = new Histogram({
      name: "gatehouse_gateway_overhead_seconds",
      help: "Gatehouse's own time before the upstream call (auth, policy, reservation, forwarding setup): the x-gatehouse-overhead-ms header.",
      buckets: OVERHEAD_SECONDS,
      registers: [registry],
    });
    new Gauge({
      name: "gatehouse_gateway_requests_in_flight",
      help: "Model requests this instance is serving.",
      registers: [registry],
      collect() {
        this.set(metrics.sources?.inFlight() ?? 0);
      },
    });
    new Gauge({
      name: "gatehouse_gateway_provider_requests_in_flight",
      help: "Model requests this instance has at each provider (their attempt's slot, in-flight-limits.ts).",
      labelNames: ["provider"],
      registers: [registry],
      collect() {
        this.reset();
        for (const p of metrics.sources?.providersInFlight?.() ?? [])
          this.set({ provider: p.provider }, p.inFlight);
      },
    });
    talliedCounter(
      registry,
      "gatehouse_gateway_refusals_total",
      "Model requests refused before anything was forwarded, by reason: in_flight_per_key, in_flight_per_workspace_provider (429), key_limit (402/403), workspace_budget (403), guardrail_budget (403), guardrail (403).",
      ["reason"],
      (add) => {
        for (const [reason, n] of Object.entries(metrics.sources?.refusals?.() ?? {})) add({ reason }, n);
        for (const [reason, n] of this.refusals) add({ reason }, n);
      },
    );
    new Gauge({
      name: "gatehouse_recording_queued",
      help: "Generations answered and waiting for their record to commit.",
      registers: [registry],
      collect() {
        this.set(metrics.sources?.recordingQueued() ?? 0);
      },
    });
    talliedCounter(
      registry,
      "gatehouse_recording_failures_total",
      "Records that failed after their answer was sent (each is logged with its generation id).",
      [],
      (add) => add({}, this.recordFailures),
    );
    talliedCounter(
      registry,
      "gatehouse_broadcast_requests_total",
      "Requests sent to observability destinations, by destination type and HTTP status (none: no answer).",
      ["destination_type", "status"],
      (add) => {
        for (const { labels, values } of this.sends.entries()) add(labels, values.n);
      },
    );
    talliedCounter(
      registry,
      "gatehouse_broadcast_generations_total",
      "Generations settled by Broadcast deliveries, by destination type and outcome (delivered, retrying, dead).",
      ["destination_type", "outcome"],
      (add) => {
        for (const { labels, values } of this.settles.entries()) add(labels, values.n);
      },
    );
    // Read from the record store at each scrape: the same figures on every instance sharing it.
    // A failed or late read leaves both gauges out of that scrape (reset, nothing set), rather
    // than failing the exposition or repeating figures that may be stale.
    new Gauge({
      name: "gatehouse_broadcast_pending_generations",
      help: "Generations pending Broadcast delivery (due, backing off or in flight) to live, enabled destinations of all organizations, by destination type.",
      labelNames: ["destination_type"],
      registers: [registry],
      async collect() {
        this.reset();
        for (const b of (await metrics.backlog())?.byType ?? []) {
          this.set({ destination_type: b.destinationType }, b.pending);
        }
      },
    });
    new Gauge({
      name: "gatehouse_broadcast_oldest_pending_age_seconds",
      help: "Age of the oldest generation pending Broadcast delivery to live, enabled destinations, by destination type (0 when none is pending).",
      labelNames: ["destination_type"],
      registers: [registry],
      async collect() {
        this.reset();
        for (const b of (await metrics.backlog())?.byType ?? []) {
          this.set({ destination_type: b.destinationType }, (b.oldestPendingAgeMs ?? 0) / 1000);
        }
      },
    });
    // Generations accepted for Broadcast and not yet in any destination's pending count.
    readGauge(
      registry,
      "gatehouse_broadcast_outbox_batches",
      "Batches of accepted generations in Broadcast's outbox not yet fanned out to their destinations' deliveries, across organizations.",
      async () => (await metrics.backlog())?.outbox.batches ?? null,
    );
    readGauge(
      registry,
      "gatehouse_broadcast_outbox_oldest_age_seconds",
      "Age of the oldest batch in Broadcast's outbox not yet fanned out (0 when none waits).",
      async () => {
        const read = await metrics.backlog();
        return read ? (read.outbox.oldestAgeMs ?? 0) / 1000 : null;
      },
    );
  }

  /**
   * Broadcast's backlog for this scrape, or null (no source, or its read failed or took longer
   * than storeReadTimeoutMs). One read at a time: the two gauges of a scrape (collected
   * together) and scrapes arriving while a slow read still runs share it, so a stalled store
   * never gathers a queue of statements from scrapes.
   */
  private async backlog(): Promise<BroadcastBacklogRead | null> {
    const sources = this.sources;
    if (!sources?.broadcastBacklog) return null;
    let read = this.backlogRead;
    if (read === null) {
      const started = (async () => {
        await Promise.resolve(); // a source that throws at once rejects the shared promise
        return sources.broadcastBacklog!();
      })();
      read = this.backlogRead = started;
      started.then(
        () => this.backlogEnded(started),
        () => this.backlogEnded(started),
      );
    }
    try {
      return await within(read, this.storeReadTimeoutMs);
    } catch (err) {
      // Once per read, not once per gauge waiting on it.
      if (this.backlogReported !== read) {
        this.backlogReported = read;
        sources.readFailed?.("broadcast_backlog", err);
      }
      return null;
    }
  }

  private backlogEnded(read: Promise<unknown>): void {
    if (this.backlogRead === read) this.backlogRead = null;
  }

  /** Where the gauges read the data plane's state (set once the gateway exists). */
  watch(sources: MetricsSources): void {
    this.sources = sources;
  }

  /** One HTTP request answered (`route`: its pattern, null when no route matched). */
  request(method: string, route: string | null, statusCode: number, seconds: number): void {
    const r = route ?? "unmatched";
    const status = String(statusCode);
    this.http.of(`${method} ${r} ${status}`, () => ({ method, route: r, status_code: status })).n++;
    this.httpSeconds.observe({ method, route: r }, seconds);
  }

  attempt(provider: string, model: string, status: number | null): void {
    const s = status === null ? "none" : String(status);
    this.attempts.of(`${provider}\n${model}\n${s}`, () => ({ provider, model, status: s })).n++;
  }

  generation(g: ServedGeneration, overheadMs: number): void {
    const t = this.served.of(`${g.provider}\n${g.model}`, () => ({ provider: g.provider, model: g.model }));
    if (g.cancelled) t.cancelled++;
    else if (g.finishReason === "error") t.error++;
    else t.completed++;
    t.prompt += g.promptTokens;
    t.completion += g.completionTokens;
    t.cached += g.cachedTokens;
    t.reasoning += g.reasoningTokens;
    t.creditsNano += Number(g.costNano);
    t.byokNano += Number(g.byokCostNano);
    this.firstToken.observe({ provider: g.provider, streamed: String(g.streamed) }, g.latencyMs / 1000);
    this.overhead.observe(overheadMs / 1000);
  }

  refused(reason: string): void {
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
  }

  recordFailed(): void {
    this.recordFailures++;
  }

  sent(destinationType: string, status: number | null): void {
    const s = status === null ? "none" : String(status);
    this.sends.of(`${destinationType} ${s}`, () => ({ destination_type: destinationType, status: s })).n++;
  }

  settled(destinationType: string, outcome: "delivered" | "retrying" | "dead", generations: number): void {
    this.settles.of(`${destinationType} ${outcome}`, () => ({
      destination_type: destinationType,
      outcome,
    })).n += generations;
  }

  /** The exposition (text format) and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
