import { randomUUID } from "node:crypto";
import type { BroadcastConfig } from "../../config/config.js";
import type { DestinationRow } from "../../domain/destinations/destination-repo.js";
import { openConfig } from "../../domain/destinations/destination-record.js";
import type { DestinationType } from "../../domain/destinations/destination-types.js";
import type { Clock } from "../../lib/clock.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { RecordStore } from "../../stores/record-store.js";
import { toBroadcastGeneration } from "../broadcast-generation.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "../encoders/encoder.js";
import type { LiveContext } from "../live-context.js";
import {
  claimDeliveries,
  discardDestinationQueue,
  dueDestinations,
  enforceCaps,
  markDelivered,
  markFailed,
  pruneDeliveries,
  recordError,
  recordSuccess,
  releaseBatches,
  releaseLease,
  type ClaimedDelivery,
} from "../outbox/deliveries-repo.js";
import { fanOutOnce, keyNames } from "../outbox/fan-out.js";
import { onOutboxWrite } from "../outbox/outbox-signal.js";
import { rowsOfPayload, type OutboxRow } from "../payload-rows.js";
import { ruleOf } from "../selection.js";
import { backoffMs, CircuitBreaker } from "./backoff.js";
import { maskErrorText } from "./mask-error.js";
import { retryable, sendRequest, succeeded, type SendResult } from "./http-send.js";

/** The encoder of a destination type (src/broadcast/encoders/index.ts encoderFor). */
export type EncoderLookup = (type: string) => DestinationEncoder | undefined;

export interface BroadcasterDeps {
  store: RecordStore;
  secretBox: SecretBox;
  clock: Clock;
  settings: Readonly<BroadcastConfig>;
  encoderFor: EncoderLookup;
  log?: { warn(obj: object, msg: string): void };
  random?: () => number;
}

interface DecodedBatch {
  rows: Map<string, OutboxRow>;
  contexts: Record<string, LiveContext>;
}

const BATCH_CACHE = 64;
const MAINTENANCE_MS = 1_000;
const CLAIMS_PER_TURN = 20;

/**
 * The delivery worker of one process (docs/broadcast.md "Delivery"): fans outbox batches out to
 * destinations, then delivers each destination's due rows in batches of its encoder's size, with
 * leases (several instances share one PostgreSQL outbox), full-jitter backoff, Retry-After, a
 * per-attempt time limit, a circuit breaker per destination and dead letters. Woken at once by
 * ingest in this process, and by polling for work of other instances.
 */
export class Broadcaster {
  readonly owner = randomUUID();
  private readonly breaker: CircuitBreaker;
  private readonly cache = new Map<number, DecodedBatch>();
  private stopped = true;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private kicked = false;
  private unsubscribe: (() => void) | null = null;
  private lastMaintenance = 0;
  private readonly busy = new Set<string>();
  private log: BroadcasterDeps["log"];

  constructor(private readonly deps: BroadcasterDeps) {
    this.log = deps.log;
    this.breaker = new CircuitBreaker(deps.settings.breakerThreshold, deps.settings.breakerCooldownMs);
  }

  /** Where pass failures are logged (the server's logger, known once the app is built). */
  useLogger(log: NonNullable<BroadcasterDeps["log"]>): void {
    this.log = log;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = onOutboxWrite(() => this.kick());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.kick();
    await this.loop;
    this.loop = null;
  }

  kick(): void {
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

  /** One pass: fan-out, maintenance when due, then a turn for every due destination. */
  async runOnce(): Promise<boolean> {
    const { store, settings } = this.deps;
    let worked = false;
    for (let i = 0; i < 20; i++) {
      const n = await fanOutOnce(store, {
        nowMs: this.now(),
        chunkOf: (t) => this.deps.encoderFor(t)?.maxBatch ?? 100,
        maxBatches: 50,
      });
      if (n === 0) break;
      worked = true;
    }
    const now = this.now();
    if (now - this.lastMaintenance >= MAINTENANCE_MS) {
      this.lastMaintenance = now;
      await enforceCaps(store, settings.queueCap, now);
      await pruneDeliveries(store.db, now, settings.deliveredRetentionMs, settings.deadRetentionMs);
      await releaseBatches(store.db);
    }
    const due = (await dueDestinations(store.db, this.now(), 200)).filter(
      (id) => !this.busy.has(id) && this.breaker.allows(id, this.now()),
    );
    if (due.length === 0) return worked;
    let next = 0;
    const lane = async () => {
      while (next < due.length && !this.stopped) {
        const id = due[next++] as string;
        this.busy.add(id);
        try {
          if (await this.deliverDestination(id)) worked = true;
        } catch (err) {
          this.log?.warn({ err: String(err), destination: id }, "broadcast delivery failed");
        } finally {
          this.busy.delete(id);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, due.length) }, lane));
    return worked;
  }

  /** Up to CLAIMS_PER_TURN claims of one destination; whether anything was claimed. */
  private async deliverDestination(id: string): Promise<boolean> {
    const { store } = this.deps;
    let claimedAny = false;
    for (let turn = 0; turn < CLAIMS_PER_TURN && !this.stopped; turn++) {
      const row = await store.db
        .selectFrom("destinations")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      if (row === undefined || row.deleted_at !== null) {
        await discardDestinationQueue(store.db, id);
        this.breaker.forget(id);
        return claimedAny;
      }
      if (Number(row.enabled) !== 1) return claimedAny; // paused
      if (!this.breaker.allows(id, this.now())) return claimedAny;
      const encoder = this.deps.encoderFor(row.type);
      if (encoder === undefined) return claimedAny;
      const leaseMs = this.deps.settings.attemptTimeoutMs * 4 + 5_000;
      const claimed = await claimDeliveries(store, id, this.owner, this.now(), leaseMs, encoder.maxBatch);
      if (claimed.length === 0) return claimedAny;
      claimedAny = true;
      await this.deliverClaim(row, encoder, claimed, leaseMs);
    }
    return claimedAny;
  }

  private async deliverClaim(
    row: DestinationRow,
    encoder: DestinationEncoder,
    claimed: ClaimedDelivery[],
    leaseMs: number,
  ): Promise<void> {
    const { store, settings } = this.deps;
    const type = row.type as DestinationType;
    const startedMs = this.now();
    // Decrypted here, at send time, and only held for this claim.
    const config = openConfig(this.deps.secretBox, row);
    const mask = (text: string) => maskErrorText(text, type, config);
    const rule = ruleOf(row);
    const seqs = [...new Set(claimed.map((c) => c.batchSeq))];

    let failure: { text: string; retry: boolean; retryAfterMs: number | null } | null = null;
    let generations: BroadcastGeneration[] = [];
    try {
      generations = await this.generationsOf(row.organization_id, claimed, rule.flags);
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
    for (const req of requests) {
      if (failure !== null) break;
      if (this.now() - startedMs > leaseMs - settings.attemptTimeoutMs) {
        failure = { text: "lease ran out before every request was sent", retry: true, retryAfterMs: null };
        break;
      }
      // Signing (S3's SigV4) happens per send: the signature covers the send time.
      const signed = encoder.sign ? await encoder.sign(req, config, new Date(this.now())) : req;
      const res: SendResult = await sendRequest(signed, {
        timeoutMs: settings.attemptTimeoutMs,
        refusePrivateAddresses: settings.refusePrivateAddresses,
      });
      if (!succeeded(res)) {
        const what = res.status === null ? res.text : `HTTP ${res.status}${res.text ? `: ${res.text}` : ""}`;
        failure = { text: what, retry: retryable(res), retryAfterMs: res.retryAfterMs };
      }
    }

    const now = this.now();
    const ids = claimed.map((c) => c.id);
    if (this.stopped && failure !== null && failure.retry) {
      await releaseLease(store.db, ids, this.owner);
      return;
    }
    if (failure === null) {
      await markDelivered(store.db, ids, this.owner, now);
      await recordSuccess(store.db, row.id, now);
      this.breaker.success(row.id);
      await releaseBatches(store.db, seqs);
      return;
    }
    const text = mask(failure.text);
    let anyDead = false;
    for (const c of claimed) {
      const attempts = c.attempts + 1;
      const dead =
        !failure.retry || attempts >= settings.maxAttempts || now - c.createdAtMs >= settings.maxAgeMs;
      anyDead ||= dead;
      const wait = backoffMs(
        attempts,
        settings.retryBaseMs,
        settings.retryMaxMs,
        failure.retryAfterMs,
        this.deps.random,
      );
      await markFailed(store.db, c.id, this.owner, now, text, dead, now + wait);
    }
    await recordError(store.db, row.id, now, text);
    this.breaker.failure(row.id, now);
    if (anyDead) await releaseBatches(store.db, seqs);
  }

  /** The claimed generations as the destination's flags allow, in claim order. */
  private async generationsOf(
    organizationId: string,
    claimed: ClaimedDelivery[],
    flags: ReturnType<typeof ruleOf>["flags"],
  ): Promise<BroadcastGeneration[]> {
    const { db } = this.deps.store;
    const seqs = [...new Set(claimed.map((c) => c.batchSeq))];
    const missing = seqs.filter((s) => !this.cache.has(s));
    if (missing.length > 0) {
      const rows = await db
        .selectFrom("broadcast_batches")
        .select(["seq", "payload", "contexts"])
        .where("seq", "in", missing)
        .execute();
      for (const r of rows) {
        const decoded: DecodedBatch = {
          rows: new Map(rowsOfPayload(r.payload).map((x) => [x.id, x])),
          contexts: r.contexts === null ? {} : (JSON.parse(r.contexts) as Record<string, LiveContext>),
        };
        this.cache.set(Number(r.seq), decoded);
        while (this.cache.size > BATCH_CACHE) this.cache.delete(this.cache.keys().next().value as number);
      }
    }
    const picked: { row: OutboxRow; context: LiveContext | null }[] = [];
    for (const c of claimed) {
      const batch = this.cache.get(c.batchSeq);
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
