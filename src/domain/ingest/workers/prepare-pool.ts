import { Worker, type ResourceLimits } from "node:worker_threads";
import type { ActivityStore } from "../../../stores/activity-store.js";
import { DomainError, type ErrorCode } from "../../errors.js";
import type { BatchPreparer, PreparedBatch } from "../pipeline/preparer-port.js";
import type { PreparedRows, RefsNeeded, ResolvedRefs } from "../records/normalise-batch.js";
import type { IngestInput } from "../records/read-body.js";

/*
 * Ingest's CPU-bound steps (parse, validate, normalise, tally, encode: ~10 ms per 1,000 records)
 * on worker threads, so that the main thread only receives bodies, runs the record-store
 * statements and answers (docs/performance.md). A batch is pinned to one worker for its three
 * messages; the worker keeps it until `release`.
 */

export type PoolRequest =
  | { t: "check"; job: number; input: IngestInput; nowMs: number }
  | { t: "normalise"; job: number; organizationId: string; refs: ResolvedRefs }
  | { t: "subset"; job: number; ids: string[] }
  | { t: "release"; job: number };

export type WireError =
  | { domain: true; code: ErrorCode; message: string; metadata: Record<string, unknown> | null }
  | { domain: false; message: string };

export type PoolReply =
  { job: number; ok: true; value: unknown } | { job: number; ok: false; error: WireError };

/**
 * A body's bytes move to the worker without a copy when they own their whole buffer (a large
 * body: Fastify concatenates it into a buffer of its own); a view into a shared pool (a small
 * body) is copied. The caller must not read the bytes afterwards.
 */
function transferable(input: IngestInput): ArrayBuffer[] {
  if (input.format === "records" || typeof input.text === "string") return [];
  const { buffer, byteOffset, byteLength } = input.text;
  return buffer instanceof ArrayBuffer && byteOffset === 0 && buffer.byteLength === byteLength
    ? [buffer]
    : [];
}

/**
 * The worker's entry: compiled, the worker's own JavaScript; run from TypeScript sources (tsx,
 * vitest), a boot file that registers tsx's loader in the worker thread first.
 */
const BOOT = import.meta.url.endsWith(".ts")
  ? new URL("./prepare-worker-boot.mjs", import.meta.url)
  : new URL("./prepare-worker.js", import.meta.url);

interface Waiter {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

/** One worker thread and the requests it has not answered yet. */
class Slot {
  readonly worker: Worker;
  readonly waiting = new Map<number, Waiter>();
  /** Batches assigned and not released (the load measure). */
  batches = 0;
  dead = false;

  constructor(onDeath: (slot: Slot) => void, limits: ResourceLimits | undefined) {
    this.worker = new Worker(BOOT, limits ? { resourceLimits: limits } : {});
    this.worker.unref(); // never keeps the process alive on its own
    this.worker.on("message", (r: PoolReply) => {
      const w = this.waiting.get(r.job);
      if (!w) return;
      this.waiting.delete(r.job);
      if (r.ok) w.resolve(r.value);
      else if (r.error.domain) w.reject(new DomainError(r.error.code, r.error.message, r.error.metadata));
      else w.reject(new Error(r.error.message));
    });
    const die = (err: Error) => {
      if (this.dead) return;
      this.dead = true;
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
      onDeath(this);
    };
    this.worker.on("error", (err) => die(new Error(`ingest worker failed: ${err.message}`)));
    this.worker.on("exit", (code) => die(new Error(`ingest worker stopped (exit code ${code})`)));
  }

  ask<T>(m: Exclude<PoolRequest, { t: "release" }>): Promise<T> {
    if (this.dead) return Promise.reject(new Error("ingest worker stopped"));
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(m.job, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage(m, m.t === "check" ? transferable(m.input) : []);
    });
  }

  tell(m: { t: "release"; job: number }): void {
    if (!this.dead) this.worker.postMessage(m);
  }
}

export interface PreparePoolOptions {
  /** Each worker's resource limits (its heap, say); default: Node's. */
  limits?: ResourceLimits;
  /** Told of each worker thread as it starts (diagnostics; tests stop one mid-batch). */
  onWorker?: (worker: Worker) => void;
}

/**
 * A pool of `size` ingest worker threads, started on first use; a worker that dies (e.g. out of
 * its heap, `limits`) fails the batches it held (500) and is replaced by the next batch.
 */
export function startPreparePool(size: number, opts: PreparePoolOptions = {}): BatchPreparer {
  const { limits, onWorker } = opts;
  if (!Number.isInteger(size) || size < 1) throw new Error("ingest worker pool: size must be ≥ 1");
  const slots: Slot[] = [];
  let nextJob = 1;
  let closed = false;

  const onDeath = (slot: Slot) => {
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
  };

  /** The least busy worker, starting one while the pool is below its size. */
  function pick(): Slot {
    if (closed) throw new Error("ingest worker pool is closed");
    let best: Slot | null = null;
    for (const s of slots) if (!best || s.batches < best.batches) best = s;
    if (!best || (best.batches > 0 && slots.length < size)) {
      best = new Slot(onDeath, limits);
      slots.push(best);
      onWorker?.(best.worker);
    }
    return best;
  }

  return {
    async prepare(input, organizationId, nowMs, resolve): Promise<PreparedBatch> {
      const slot = pick();
      const job = nextJob++;
      slot.batches += 1;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        slot.batches -= 1;
        slot.tell({ t: "release", job });
      };
      try {
        const refs = await slot.ask<RefsNeeded>({ t: "check", job, input, nowMs });
        const resolved = await resolve(refs);
        const rows = await slot.ask<PreparedRows>({ t: "normalise", job, organizationId, refs: resolved });
        return {
          ...rows,
          subset: (ids) => slot.ask<PreparedRows>({ t: "subset", job, ids: [...ids] }),
          release,
        };
      } catch (err) {
        release();
        throw err;
      }
    },
    async close() {
      closed = true;
      await Promise.all(slots.splice(0).map((s) => s.worker.terminate()));
    },
  };
}

/**
 * The composition root's choice: a pool of `workers` threads for the embedded store's ingest
 * path (the main thread is its limit there), none with 0 workers or on ClickHouse (inline).
 */
export function ingestPreparerFor(workers: number, activity: ActivityStore): BatchPreparer | undefined {
  return activity.exclusive && workers > 0 ? startPreparePool(workers) : undefined;
}
