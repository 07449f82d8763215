import { randomUUID } from "node:crypto";
import type { BroadcastConfig } from "../../config/config.js";
import { DESTINATION_TYPE_NAMES } from "../../domain/destinations/destination-types.js";
import type { Clock } from "../../lib/clock.js";
import { outboundPolicy } from "../../lib/outbound-policy.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { DestinationEncoder } from "../encoders/encoder.js";
import { claimDeliveries, type ClaimedDelivery, type ClaimedDestination } from "../outbox/claims-repo.js";
import { dueDestinations, type DueDestination, type Ripeness } from "../outbox/due-destinations.js";
import { fanOutOnce } from "../outbox/fan-out.js";
import type { OutboxSignal } from "../outbox/outbox-signal.js";
import { releaseBatches } from "../outbox/batches-repo.js";
import { enforceCaps, pruneDeliveries } from "../outbox/queue-upkeep.js";
import { CircuitBreaker } from "./backoff.js";
import { BatchCache } from "./batch-cache.js";
import { openClaim } from "./claim.js";
import { encodeClaim } from "./encode.js";
import type { DecodedBatch } from "./load-generations.js";
import { decideOutcomes } from "./outcomes.js";
import { sendClaim, type SendDeps } from "./send.js";
import { settleClaim, type SettleDeps } from "./settle.js";

/** The encoder of a destination type (src/broadcast/encoders/index.ts encoderFor). */
export type EncoderLookup = (type: string) => DestinationEncoder | undefined;

export interface BroadcasterDeps {
  store: RecordStore;
  secretBox: SecretBox;
  clock: Clock;
  settings: Readonly<BroadcastConfig>;
  encoderFor: EncoderLookup;
  /** This process's outbox signal (the composition root's): in-process writes wake the worker. */
  outboxSignal: OutboxSignal;
  log?: { warn(obj: object, msg: string): void };
  random?: () => number;
  /** Told of every request sent and every generation settled (the process's metrics). */
  observer?: BroadcastObserver;
}

/** What the delivery worker reports (src/metrics/): cheap calls that must not throw. */
export interface BroadcastObserver {
  /** One request to a destination ended: its HTTP status, or null when there was no answer. */
  sent(destinationType: string, status: number | null): void;
  /** Generations of a claim settled: delivered, to be retried, or dead-lettered. */
  settled(destinationType: string, outcome: "delivered" | "retrying" | "dead", generations: number): void;
}

const BATCH_CACHE = 64;
/** Stored JSON of the decoded batches kept, at most (BatchCache). */
const BATCH_CACHE_SIZE = 64 * 1024 * 1024;
const MAINTENANCE_MS = 1_000;
/**
 * The share of the record store's time the whole-queue sweeps (queue caps, releasing batches no
 * pending delivery needs) may take: each waits at least MAINTENANCE_MS and at least its last run's
 * duration divided by this before it runs again. Both cost what the queue holds (a destination
 * down for long, docs/broadcast.md "Queue sweeps");
 * at 1 % they never take more than a hundredth of the connection, whatever the backlog.
 */
export const SWEEP_SHARE = 0.01;

/** How long after a sweep that took `tookMs` the next may run. */
export const sweepDelayMs = (tookMs: number): number => Math.max(MAINTENANCE_MS, tookMs / SWEEP_SHARE);
const CLAIMS_PER_TURN = 20;

/**
 * The delivery worker of one process (docs/broadcast.md "Delivery"): fans outbox batches out to
 * destinations, then delivers each destination's due rows in batches of its encoder's size, with
 * leases (several instances share one PostgreSQL outbox), full-jitter backoff, Retry-After, a
 * per-attempt time limit, a circuit breaker per destination and dead letters. Woken by ingest in
 * this process (BROADCAST_LINGER_MS after the first write of a quiet spell, so that the small
 * batches of the gateway's recorder gather into one fan-out and one request per destination;
 * at once with 0), and by polling for work of other instances, which it claims once ripe
 * (dueDestinations: the oldest waited the linger, or a full batch is pending).
 */
export class Broadcaster {
  readonly owner = randomUUID();
  private readonly breaker: CircuitBreaker;
  private readonly cache = new BatchCache<DecodedBatch>(BATCH_CACHE, BATCH_CACHE_SIZE);
  private stopped = true;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private kicked = false;
  private unsubscribe: (() => void) | null = null;
  private lastMaintenance = 0;
  private nextSweep = 0;
  /** Claim loops running per destination in this process. */
  private readonly busy = new Map<string, number>();
  private claims = 0;
  private log: BroadcasterDeps["log"];
  /** The linger after an in-process write (null: none running). */
  private lingerTimer: ReturnType<typeof setTimeout> | null = null;
  /** A linger ended: the next pass claims every due delivery (the linger was the wait). */
  private lingered = false;
  /** The smallest encoder batch size of any destination type (dueDestinations' own filter). */
  private readonly minFull: number;

  constructor(private readonly deps: BroadcasterDeps) {
    this.log = deps.log;
    this.breaker = new CircuitBreaker(deps.settings.breakerThreshold, deps.settings.breakerCooldownMs);
    this.minFull = Math.max(
      1,
      Math.min(...DESTINATION_TYPE_NAMES.map((t) => deps.encoderFor(t)?.maxBatch ?? Infinity)),
    );
  }

  /** Where pass failures are logged (the server's logger, known once the app is built). */
  useLogger(log: NonNullable<BroadcasterDeps["log"]>): void {
    this.log = log;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.deps.outboxSignal.onWrite(() => this.kick());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.lingerTimer !== null) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    this.wakeNow();
    await this.loop;
    this.loop = null;
  }

  /**
   * New outbox rows in this process: a pass once the linger has passed since the first write of
   * this spell (writes meanwhile join it), or at once when BROADCAST_LINGER_MS is 0.
   */
  kick(): void {
    const linger = this.deps.settings.lingerMs;
    if (linger <= 0 || this.stopped) return this.wakeNow();
    if (this.lingerTimer !== null) return;
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = null;
      this.lingered = true;
      this.wakeNow();
    }, linger);
  }

  private wakeNow(): void {
    this.kicked = true;
    this.wake?.();
  }

  breakerState(destinationId: string): "closed" | "open" | "half_open" {
    return this.breaker.state(destinationId, this.now());
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let worked = false;
      try {
        worked = await this.runOnce();
      } catch (err) {
        this.log?.warn({ err: String(err) }, "broadcast worker pass failed");
      }
      if (!worked && !this.stopped) await this.idle();
    }
  }

  private idle(): Promise<void> {
    if (this.kicked) {
      this.kicked = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.deps.settings.pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        this.kicked = false;
        done();
      };
    });
  }

  /** Queue upkeep when due: pruning every MAINTENANCE_MS, the whole-queue sweeps less often. */
  private async maintain(): Promise<void> {
    const { store, settings } = this.deps;
    const now = this.now();
    if (now - this.lastMaintenance < MAINTENANCE_MS) return;
    this.lastMaintenance = now;
    await pruneDeliveries(store.db, now, settings.deliveredRetentionMs, settings.deadRetentionMs);
    this.breaker.prune(now);
    if (now < this.nextSweep) return;
    const started = performance.now();
    await enforceCaps(store, settings.queueCap, now);
    await releaseBatches(store.db);
    this.nextSweep = now + sweepDelayMs(performance.now() - started);
  }

  /**
   * One pass: fan-out, maintenance when due, then a turn for every due destination (every one
   * after a linger or with BROADCAST_LINGER_MS 0, else the ripe ones).
   */
  async runOnce(): Promise<boolean> {
    const { store, settings } = this.deps;
    const ripeAll = this.lingered || settings.lingerMs <= 0;
    this.lingered = false;
    let worked = false;
    for (let i = 0; i < 20; i++) {
      const n = await fanOutOnce(store, {
        nowMs: this.now(),
        chunkOf: (t) => this.deps.encoderFor(t)?.maxBatch ?? 100,
        maxBatches: 50,
        lingerMs: settings.lingerMs,
        // Fan-out decodes each batch anyway: keep it for sending (the batch is final once written).
        decoded: (seq, rows, contexts, size) =>
          this.cache.remember(seq, { rows: new Map(rows.map((r) => [r.id, r])), contexts }, size),
      });
      if (n === 0) break;
      worked = true;
    }
    await this.maintain();
    const ripe: Ripeness | null = ripeAll
      ? null
      : {
          ripeBeforeMs: this.now() - settings.lingerMs,
          fullAt: (t) => this.deps.encoderFor(t)?.maxBatch ?? 100,
          minFull: this.minFull,
        };
    const due = (await dueDestinations(store.db, this.now(), 200, ripe, store.caps.lateralJoins)).filter(
      (d) => !this.busy.has(d.id) && this.breaker.allows(d.id, this.now()),
    );
    if (due.length === 0) return worked;
    // Every due destination gets an equal share of the lanes (at least one): with fewer due
    // destinations than BROADCAST_CONCURRENCY, one destination has several claims in flight, so
    // encoding the next batch overlaps the receiver's handling of the previous one. With a
    // linger, no more lanes than its full batches pending: parallel claims (SKIP LOCKED on
    // PostgreSQL) would split a small backlog into small requests again.
    const perDestination = Math.max(1, Math.floor(settings.concurrency / due.length));
    const maxBatchOf = (d: DueDestination) => this.deps.encoderFor(d.type)?.maxBatch ?? 100;
    const lanesOf = (d: DueDestination) =>
      settings.lingerMs <= 0
        ? perDestination
        : Math.max(1, Math.min(perDestination, d.fullClaims ?? Math.ceil(d.pending / maxBatchOf(d))));
    const work: DueDestination[] = due.flatMap((d) => Array.from({ length: lanesOf(d) }, () => d));
    // Claims left this pass per destination ripe only for its full batches (the rest waits).
    const budget = new Map(
      due.filter((d) => d.fullClaims !== null).map((d) => [d.id, d.fullClaims as number]),
    );
    let next = 0;
    const lane = async () => {
      while (next < work.length && !this.stopped) {
        const d = work[next++] as DueDestination;
        this.busy.set(d.id, (this.busy.get(d.id) ?? 0) + 1);
        try {
          if (await this.deliverDestination(d, budget)) worked = true;
        } catch (err) {
          this.log?.warn({ err: String(err), destination: d.id }, "broadcast delivery failed");
        } finally {
          const left = (this.busy.get(d.id) ?? 1) - 1;
          if (left === 0) this.busy.delete(d.id);
          else this.busy.set(d.id, left);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, work.length) }, lane));
    return worked;
  }

  /**
   * Up to CLAIMS_PER_TURN claims of one destination; whether anything was claimed. Each claim is
   * one statement that also reads the destination (claimDeliveries): a destination disabled or
   * deleted meanwhile yields nothing, and its current flags and config apply to the claim.
   */
  private async deliverDestination(due: DueDestination, budget: Map<string, number>): Promise<boolean> {
    const { store } = this.deps;
    const encoder = this.deps.encoderFor(due.type);
    if (encoder === undefined) return false;
    const leaseMs = this.deps.settings.attemptTimeoutMs * 4 + 5_000;
    let claimedAny = false;
    for (let turn = 0; turn < CLAIMS_PER_TURN && !this.stopped; turn++) {
      if (!this.breaker.allows(due.id, this.now())) return claimedAny;
      const left = budget.get(due.id);
      if (left !== undefined) {
        if (left <= 0) return claimedAny;
        budget.set(due.id, left - 1);
      }
      // Each claim has its own lease token, so parallel claims of one process never settle
      // each other's rows.
      const lease = `${this.owner}/${++this.claims}`;
      const claim = await claimDeliveries(store, due.id, lease, this.now(), leaseMs, encoder.maxBatch);
      if (claim.destination === null) return claimedAny;
      claimedAny = true;
      await this.deliverClaim(claim.destination, encoder, claim.rows, lease, leaseMs);
      // With a linger, a partial claim took all that was due: what arrived since waits its turn.
      const items = claim.rows.reduce((n, c) => n + c.ids.length, 0);
      if (this.deps.settings.lingerMs > 0 && items < encoder.maxBatch) return claimedAny;
    }
    return claimedAny;
  }

  /** One claim through the stages: claim → encode → send → outcomes → settle. */
  private async deliverClaim(
    destination: ClaimedDestination,
    encoder: DestinationEncoder,
    rows: ClaimedDelivery[],
    lease: string,
    leaseMs: number,
  ): Promise<void> {
    const { store, settings, observer } = this.deps;
    const startedMs = this.now();
    const claim = await openClaim(
      { store, secretBox: this.deps.secretBox, cache: this.cache },
      destination,
      rows,
      lease,
    );
    const encoded = claim.failure === null ? encodeClaim(encoder, claim.generations, claim.config) : null;
    const sendDeps: SendDeps = {
      encoder,
      attemptTimeoutMs: settings.attemptTimeoutMs,
      addresses: outboundPolicy(settings),
      leaseMs,
      now: () => this.now(),
      sent: (status) => observer?.sent(claim.type, status),
    };
    const tally = await sendClaim(sendDeps, claim, encoded?.requests ?? [], startedMs);
    const nowMs = this.now();
    const outcomes = decideOutcomes({
      rows,
      tally,
      failure: claim.failure ?? encoded?.failure ?? null,
      createdAt: new Map(claim.generations.map((g) => [g.id, g.createdAtMs])),
      nowMs,
      policy: settings,
      stopping: this.stopped,
      random: this.deps.random,
    });
    const settle: SettleDeps = {
      store,
      breaker: this.breaker,
      settled: (outcome, n) => observer?.settled(claim.type, outcome, n),
    };
    await settleClaim(settle, claim, outcomes, nowMs);
  }
}
