import { randomUUID } from "node:crypto";
import type { BroadcastConfig } from "../../config/config.js";
import { openConfig } from "../../domain/destinations/destination-record.js";
import { DESTINATION_TYPE_NAMES, type DestinationType } from "../../domain/destinations/destination-types.js";
import type { Clock } from "../../lib/clock.js";
import { outboundPolicy } from "../../lib/outbound-policy.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { RecordStore } from "../../stores/record-store.js";
import { toBroadcastGeneration } from "../broadcast-generation.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "../encoders/encoder.js";
import type { LiveContext } from "../live-context.js";
import type { GenerationFlags } from "../broadcast-generation.js";
import {
  claimDeliveries,
  markDelivered,
  markFailed,
  releaseLease,
  splitDelivery,
  type ClaimedDelivery,
  type ClaimedDestination,
} from "../outbox/claims-repo.js";
import { dueDestinations, type DueDestination, type Ripeness } from "../outbox/due-destinations.js";
import { enforceCaps, pruneDeliveries, recordError, releaseBatches } from "../outbox/queue-upkeep.js";
import { fanOutOnce, keyNames } from "../outbox/fan-out.js";
import type { OutboxSignal } from "../outbox/outbox-signal.js";
import { rowsOfPayload, type OutboxRow } from "../payload-rows.js";
import { backoffMs, CircuitBreaker } from "./backoff.js";
import { BatchCache } from "./batch-cache.js";
import { maskErrorText } from "./mask-error.js";
import { failureText } from "./failure-text.js";
import { retryable, sendRequest, succeeded, type SendResult } from "./http-send.js";

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

interface DecodedBatch {
  rows: Map<string, OutboxRow>;
  contexts: Record<string, LiveContext>;
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

/** What went wrong with a claim's request (or before it was sent). */
interface Failure {
  text: string;
  retry: boolean;
  retryAfterMs: number | null;
}

/**
 * A refusal of one body rather than of the destination: too large, or a payload the receiver
 * cannot take. The other bodies of the claim are still sent. Any other refusal (401, 403, 404,
 * a redirect, a refused address) would refuse them too.
 */
const refusesBody = (r: SendResult): boolean => r.status === 400 || r.status === 413 || r.status === 422;

/** A request left unsent because a generation it also carried was refused (see deliverClaim). */
const NOT_SENT: Failure = {
  text: "not sent: the request also carried a generation the receiver refused",
  retry: true,
  retryAfterMs: null,
};

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
    const now = this.now();
    if (now - this.lastMaintenance >= MAINTENANCE_MS) {
      this.lastMaintenance = now;
      await pruneDeliveries(store.db, now, settings.deliveredRetentionMs, settings.deadRetentionMs);
      this.breaker.prune(now);
      if (now >= this.nextSweep) {
        const started = performance.now();
        await enforceCaps(store, settings.queueCap, now);
        await releaseBatches(store.db);
        this.nextSweep = now + sweepDelayMs(performance.now() - started);
      }
    }
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

  private async deliverClaim(
    row: ClaimedDestination,
    encoder: DestinationEncoder,
    claimed: ClaimedDelivery[],
    lease: string,
    leaseMs: number,
  ): Promise<void> {
    const { store, settings } = this.deps;
    const type = row.type as DestinationType;
    const startedMs = this.now();
    // Decrypted here, at send time, and only held for this claim.
    const config = openConfig(this.deps.secretBox, { id: row.id, config_ciphertext: row.configCiphertext });
    // The headers last sent: credentials the encoder derived from the config are masked too.
    let sentHeaders: Record<string, string> = {};
    const mask = (text: string) => maskErrorText(text, type, config, sentHeaders);
    const flags: GenerationFlags = {
      privacyMode: row.privacyMode,
      cost: row.cost,
      identity: row.identity,
      requestContext: row.requestContext,
    };
    const seqs = [...new Set(claimed.map((c) => c.batchSeq))];

    let failure: Failure | null = null;
    let generations: BroadcastGeneration[] = [];
    try {
      generations = await this.generationsOf(row.organizationId, claimed, flags);
    } catch (err) {
      failure = { text: `outbox: ${String(err)}`, retry: false, retryAfterMs: null };
    }
    let requests: EncodedRequest[] = [];
    if (failure === null && generations.length > 0) {
      try {
        requests = encoder.encode(generations, config);
      } catch (err) {
        failure = {
          text: `encode: ${err instanceof Error ? err.message : String(err)}`,
          retry: false,
          retryAfterMs: null,
        };
      }
    }
    // Each generation's outcome follows the requests that carry it (EncodedRequest.generationIds):
    // a body the receiver refuses (413, 400, 422) dead-letters its own generations and the other
    // bodies are still sent; a retryable failure (or the lease running out) stops the claim and
    // what was not delivered yet is retried; any other refusal (401, 403, 404, a refused address)
    // stops it too and dead-letters the rest, as it would refuse them as well. What the receiver
    // accepted is delivered, whatever follows.
    const everyId = generations.map((g) => g.id);
    /** Generation id → why it was not delivered (absent: delivered). A refusal beats a retry. */
    const failed = new Map<string, Failure>();
    const fail = (id: string, f: Failure) => {
      const current = failed.get(id);
      if (current === undefined || (current.retry && !f.retry)) failed.set(id, f);
    };
    let stop: Failure | null = null;
    let accepted = 0;
    for (const req of requests) {
      const carried = req.generationIds ?? everyId;
      if (stop === null && this.now() - startedMs > leaseMs - settings.attemptTimeoutMs) {
        stop = { text: "lease ran out before every request was sent", retry: true, retryAfterMs: null };
      }
      if (stop === null && carried.some((id) => failed.get(id)?.retry === false)) {
        // A step that also needs a refused generation: the others are retried without it.
        for (const id of carried) fail(id, NOT_SENT);
        continue;
      }
      if (stop !== null) {
        for (const id of carried) fail(id, stop);
        continue;
      }
      // Signing (S3's SigV4) happens per send: the signature covers the send time.
      const signed = encoder.sign ? await encoder.sign(req, config, new Date(this.now())) : req;
      sentHeaders = signed.headers;
      const res: SendResult = await sendRequest(signed, {
        timeoutMs: settings.attemptTimeoutMs,
        addresses: outboundPolicy(settings),
      });
      this.deps.observer?.sent(type, res.status);
      if (succeeded(res)) {
        accepted++;
        continue;
      }
      const f: Failure = {
        text: failureText(res, mask),
        retry: retryable(res),
        retryAfterMs: res.retryAfterMs,
      };
      for (const id of carried) fail(id, f);
      if (f.retry || !refusesBody(res)) stop = f;
    }
    // Before any request (the outbox batch unreadable, the encoder threw): the whole claim.
    if (failure !== null) for (const c of claimed) for (const id of c.ids) fail(id, failure);

    const now = this.now();
    if (failed.size === 0) {
      // One statement: the last success is read from the delivered rows (delivery-status.ts), and
      // batches no pending delivery needs are released by the next queue sweep.
      await markDelivered(
        store.db,
        claimed.map((c) => c.id),
        lease,
        now,
      );
      this.deps.observer?.settled(
        type,
        "delivered",
        claimed.reduce((n, c) => n + c.ids.length, 0),
      );
      this.breaker.success(row.id);
      return;
    }

    // A row whose generations had different outcomes is split, one row per outcome.
    const createdAt = new Map(generations.map((g) => [g.id, g.createdAtMs]));
    const settle: { row: ClaimedDelivery; failure: Failure | null }[] = [];
    for (const c of claimed) {
      const parts = new Map<Failure | null, string[]>();
      for (const id of c.ids) {
        const f = failed.get(id) ?? null;
        const list = parts.get(f) ?? [];
        list.push(id);
        parts.set(f, list);
      }
      const entries = [...parts.entries()];
      if (entries.length <= 1) {
        settle.push({ row: c, failure: entries[0]?.[0] ?? null });
        continue;
      }
      const rowIds = await splitDelivery(
        store,
        c.id,
        lease,
        entries.map(([, ids]) => {
          const times = ids.map((id) => createdAt.get(id)).filter((t): t is number => t !== undefined);
          return {
            ids,
            minCreatedMs: times.length > 0 ? Math.min(...times) : c.createdAtMs,
            maxCreatedMs: times.length > 0 ? Math.max(...times) : c.createdAtMs,
          };
        }),
      );
      if (rowIds === null) continue; // no longer this claim's
      entries.forEach(([f, ids], i) =>
        settle.push({ row: { ...c, id: rowIds[i] as number, ids }, failure: f }),
      );
    }

    const delivered = settle.filter((s) => s.failure === null).map((s) => s.row.id);
    if (delivered.length > 0) {
      await markDelivered(store.db, delivered, lease, now);
      const n = settle.reduce((sum, s) => sum + (s.failure === null ? s.row.ids.length : 0), 0);
      this.deps.observer?.settled(type, "delivered", n);
    }
    // Stopping: what is to be retried goes back untouched (the attempt does not count).
    const released = this.stopped ? settle.filter((s) => s.failure?.retry === true).map((s) => s.row.id) : [];
    if (released.length > 0) await releaseLease(store.db, released, lease);
    let anyDead = false;
    for (const { row: c, failure: f } of settle) {
      if (f === null || (f.retry && this.stopped)) continue;
      const attempts = c.attempts + 1;
      const dead = !f.retry || attempts >= settings.maxAttempts || now - c.createdAtMs >= settings.maxAgeMs;
      anyDead ||= dead;
      const wait = backoffMs(
        attempts,
        settings.retryBaseMs,
        settings.retryMaxMs,
        f.retryAfterMs,
        this.deps.random,
      );
      await markFailed(store.db, c.id, lease, now, mask(f.text), dead, now + wait);
      this.deps.observer?.settled(type, dead ? "dead" : "retrying", c.ids.length);
    }
    const shown = stop ?? failure ?? [...failed.values()][0];
    const interrupted = this.stopped && shown?.retry === true;
    if (shown !== undefined && !interrupted) {
      await recordError(store.db, row.id, now, mask(shown.text));
      // A receiver that took some bodies and refused one (too large) is up: that is no failed send.
      if (stop !== null || failure !== null || accepted === 0) this.breaker.failure(row.id, now);
      else this.breaker.success(row.id);
      // A Retry-After speaks for the receiver, not for these rows: the destination waits it out.
      if (stop?.retryAfterMs != null) this.breaker.hold(row.id, now, now + stop.retryAfterMs);
    }
    if (anyDead) await releaseBatches(store.db, seqs);
  }

  /** The claimed generations as the destination's flags allow, in claim order. */
  private async generationsOf(
    organizationId: string,
    claimed: ClaimedDelivery[],
    flags: GenerationFlags,
  ): Promise<BroadcastGeneration[]> {
    const { db } = this.deps.store;
    const seqs = [...new Set(claimed.map((c) => c.batchSeq))];
    // This claim's batches, held here: keeping one in the cache may evict another of them.
    const batches = new Map<number, DecodedBatch>();
    for (const s of seqs) {
      const kept = this.cache.get(s);
      if (kept !== undefined) batches.set(s, kept);
    }
    const missing = seqs.filter((s) => !batches.has(s));
    if (missing.length > 0) {
      const rows = await db
        .selectFrom("broadcast_batches")
        .select(["seq", "payload", "contexts"])
        .where("seq", "in", missing)
        .execute();
      for (const r of rows) {
        const batch: DecodedBatch = {
          rows: new Map(rowsOfPayload(r.payload).map((x) => [x.id, x])),
          contexts: r.contexts === null ? {} : (JSON.parse(r.contexts) as Record<string, LiveContext>),
        };
        batches.set(Number(r.seq), batch);
        this.cache.remember(Number(r.seq), batch, r.payload.length + (r.contexts?.length ?? 0));
      }
    }
    const picked: { row: OutboxRow; context: LiveContext | null }[] = [];
    for (const c of claimed) {
      const batch = batches.get(c.batchSeq);
      if (batch === undefined) throw new Error(`batch ${c.batchSeq} is gone`);
      for (const id of c.ids) {
        const row = batch.rows.get(id);
        if (row) picked.push({ row, context: batch.contexts[id] ?? null });
      }
    }
    const names = flags.identity
      ? await keyNames(db, organizationId, [...new Set(picked.map((p) => p.row.api_key_hash))])
      : new Map<string, string>();
    return picked.map((p) =>
      toBroadcastGeneration(
        { row: p.row, context: p.context, apiKeyName: names.get(p.row.api_key_hash) ?? null },
        flags,
      ),
    );
  }
}
