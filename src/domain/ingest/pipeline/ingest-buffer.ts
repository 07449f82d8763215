import type { ExclusiveActivityWriter } from "../../../stores/activity-store.js";
import { encodedOf } from "../../../stores/column-texts.js";
import type { Db, RecordStore } from "../../../stores/record-store.js";
import type { PreparedBatch } from "./preparer-port.js";
import { newId } from "../../../lib/ids.js";
import {
  appendBuffer,
  bufferedOf,
  deleteBuffered,
  hasBuffered,
  lastBuffered,
  readBuffer,
} from "../repos/buffer-repo.js";
import { SegmentLog } from "../../../stores/segment-log.js";
import type { PreparedRows } from "../records/normalise-batch.js";
import { recordAcceptance } from "./record-acceptance.js";
import type { AcceptedOffer } from "./accepted-sink.js";
import { claimGenerationIds } from "../repos/seen-repo.js";

/*
 * Ingest on a single-writer activity store (embedded DuckDB), through a buffer in the record store.
 *
 * Accepting a batch is ONE record-store transaction: claim its ids (generations_seen), add the new
 * rows to the ledger, labels and activity version, write the new rows, encoded, to the store's
 * ingest log (src/stores/segment-log.ts: files beside the DuckDB file) and add a row naming them to
 * ingest_buffer. The answer follows its commit: nothing acknowledged can be lost, and a retry
 * never counts a record twice, without any distributed transaction. (The rows go to a file rather
 * than into the record store: ~0.3 ms per batch of 1,000 instead of ~5 ms of SQLite writes,
 * checkpoints and reads on the main thread.)
 *
 * A flusher moves buffered batches to the activity store in the background, many per transaction
 * (up to flushMaxRows): DuckDB's CPU per row falls by about 40 % from transactions of 1,000 rows
 * to transactions of 10,000 (docs/performance.md). Each activity transaction also records the
 * batches' sequence numbers (ingest_applied), and only then are the buffer rows deleted; a crash
 * in between is settled by recovery, which deletes the buffer rows already applied instead of
 * applying them twice. Sequence numbers are never reused, so an applied number can be forgotten
 * once its buffer row is gone.
 *
 * Read-your-writes: every read of the activity store first waits for the batches accepted before
 * it (ExclusiveActivityWriter.beforeRead → drain), only its organization's when the read names
 * one (analytics queries do). When the flusher falls behind by more than
 * maxPendingRows, new batches wait for it before they are accepted (backpressure).
 */

export interface IngestBufferLimits {
  /** Rows per activity transaction at most (one batch alone may be larger). */
  flushMaxRows: number;
  /** Batches per activity transaction at most. */
  flushMaxBatches: number;
  /** Accepted rows not yet flushed past which new batches wait (backpressure). */
  maxPendingRows: number;
  /**
   * How long accepted batches may wait to gather into one activity transaction (0: flushed as
   * soon as accepted). Reads never wait for it: a read of the activity store flushes what it
   * needs at once (read-your-writes holds). Nor does a full transaction's worth (flushMaxRows).
   */
  flushLingerMs: number;
}

export const DEFAULT_INGEST_BUFFER_LIMITS: IngestBufferLimits = {
  flushMaxRows: 50_000,
  flushMaxBatches: 200,
  maxPendingRows: 200_000,
  flushLingerMs: 0,
};

const ignore = (): undefined => undefined;

class IngestBuffer {
  private log: SegmentLog | null = null;
  private opening: Promise<SegmentLog> | null = null;
  private recovery: Promise<void> | null = null;
  private flushing: Promise<void> | null = null;
  /** Rows accepted by this process and not flushed yet (an estimate for backpressure). */
  private pendingRows = 0;
  /** A batch was accepted since the running flush pass began. */
  private dirty = false;
  /** Callers waiting for the flusher's next step (one activity transaction, or the end of a run). */
  private stepWaiters: { done: () => void; fail: (err: unknown) => void }[] = [];
  /** The lingering flush's timer (flushLingerMs), while one is scheduled. */
  private lingerTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: RecordStore,
    private readonly writer: ExclusiveActivityWriter,
    private readonly limits: IngestBufferLimits,
  ) {}

  /**
   * Opens the log once, settling what an earlier session left: buffer rows already applied (a crash between the activity commit and their
   * deletion), and payloads of batches no longer buffered (or never accepted).
   */
  private opened(): Promise<SegmentLog> {
    this.opening ??= (async () => {
      await this.settleApplied();
      const log = SegmentLog.open(this.writer.logDir);
      const buffered = await bufferedOf(this.store.db, this.writer.owner);
      const missing = buffered.filter((b) => log.get(b.token) === undefined);
      if (missing.length > 0) {
        throw new Error(
          `ingest: ${missing.length} accepted batch(es) are missing from the ingest log ${this.writer.logDir ?? "(memory)"}; ` +
            "it must be kept with the activity store file",
        );
      }
      log.retain(new Set(buffered.map((b) => b.token)));
      // Left by an earlier session: reads must wait for them (drain's shortcut looks at this).
      this.pendingRows += buffered.length;
      this.log = log;
      return log;
    })().catch((err: unknown) => {
      this.opening = null; // tried again by the next caller
      throw err;
    });
    return this.opening;
  }

  /** Deletes the buffer rows whose batches are already applied, then forgets their numbers. */
  private async settleApplied(): Promise<void> {
    const applied = await this.writer.applied();
    if (applied.length === 0) return;
    const done = new Set(applied);
    const rows = (await bufferedOf(this.store.db, this.writer.owner)).filter((b) => done.has(b.seq));
    await deleteBuffered(
      this.store.db,
      rows.map((b) => b.seq),
    );
    this.log?.release(rows.map((b) => b.token));
    await this.writer.forget(applied);
  }

  /** After a failed flush (which may have failed after the activity commit): settled once. */
  private recovered(): Promise<void> {
    this.recovery ??= this.settleApplied().catch((err: unknown) => {
      this.recovery = null;
      throw err;
    });
    return this.recovery;
  }

  /** Accepts a batch (see the top of this file); resolves to the number of rows accepted. */
  async accept(
    organizationId: string,
    batch: PreparedBatch,
    offer?: AcceptedOffer,
    alsoInTransaction?: (trx: Db) => Promise<void>,
  ): Promise<number> {
    const log = await this.opened();
    while (this.pendingRows > this.limits.maxPendingRows) await this.nextStep();
    const { store, writer } = this;
    let token: string | null = null;
    let offered = false;
    try {
      const accepted = await store.transaction(async (trx) => {
        // Sorted, so that concurrent batches sharing ids lock them in the same order (no deadlock).
        const claimed = await claimGenerationIds(trx, organizationId, [...batch.ids].sort(), store.caps);
        if (claimed.size === 0) return 0;
        const fresh: PreparedRows = claimed.size < batch.ids.length ? await batch.subset(claimed) : batch;
        offered = await recordAcceptance(
          trx,
          store,
          organizationId,
          fresh,
          offer && { offer, ids: fresh.ids, payload: () => fresh.payload },
        );
        token = newId();
        // On disk before the row naming it commits (synced too when the record store syncs its
        // commits: PostgreSQL; SQLite runs with synchronous=NORMAL).
        await log.append(token, fresh.payload, store.caps.syncsCommits);
        await appendBuffer(trx, { owner: writer.owner, organizationId, rowCount: fresh.ids.length, token });
        await alsoInTransaction?.(trx);
        return fresh.ids.length;
      });
      if (accepted > 0) {
        this.pendingRows += accepted;
        this.kick();
      }
      if (offered) offer?.sink.written();
      return accepted;
    } catch (err) {
      if (token !== null) log.release([token]);
      throw err;
    }
  }

  /**
   * Starts the flusher unless it runs (then it takes the new batch in its next pass), after
   * flushLingerMs when that is set. No reaction is attached to a running flush: its promise lives
   * as long as batches keep coming, and each reaction would keep its caller's batch in memory
   * until then.
   */
  private kick(): void {
    this.dirty = true;
    if (this.flushing !== null || this.lingerTimer !== null) return;
    if (!this.lingers()) {
      void this.flush().catch(ignore); // a read or the next batch tries again
      return;
    }
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = null;
      void this.flush().catch(ignore);
    }, this.limits.flushLingerMs);
    this.lingerTimer.unref(); // what is left at exit is written by the next start
  }

  /** Whether the flusher may wait: a linger is set, nobody waits for a step, no full transaction is pending. */
  private lingers(): boolean {
    return (
      this.limits.flushLingerMs > 0 &&
      this.stepWaiters.length === 0 &&
      this.pendingRows < this.limits.flushMaxRows
    );
  }

  private clearLinger(): void {
    if (this.lingerTimer === null) return;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
  }

  /**
   * Runs the flusher until the buffer is empty (joining the run in progress). A failed pass
   * rejects; the batches stay buffered, and the next accepted batch, read or start tries again,
   * settling first what the failure may have left (it may have come after the activity commit).
   */
  flush(): Promise<void> {
    this.clearLinger();
    this.flushing ??= (async () => {
      let failed = false;
      try {
        await this.opened();
        await this.recovered();
        do {
          this.dirty = false;
          while (await this.flushOnce()) {
            this.stepped();
            if (this.lingers()) break; // what arrives meanwhile gathers for the next timer
          }
        } while (this.dirty && !this.lingers()); // a batch accepted while the last pass found none
      } catch (err) {
        failed = true;
        this.recovery = null;
        for (const w of this.stepWaiters.splice(0)) w.fail(err);
        throw err;
      } finally {
        this.flushing = null;
        this.stepped();
        // Batches accepted during the run and left for the linger get their timer.
        if (!failed && this.dirty) this.kick();
      }
    })();
    return this.flushing;
  }

  /** Wakes the callers waiting for the flusher's next step; they look again at what they wait for. */
  private stepped(): void {
    for (const w of this.stepWaiters.splice(0)) w.done();
  }

  /**
   * Resolves after the flusher's next step (starting it if idle), rejects if it fails. Under
   * sustained ingest a run of the flusher never ends (new batches keep arriving), so callers that
   * wait for particular batches (reads, backpressure) wait for steps, not for the run.
   */
  private nextStep(): Promise<void> {
    const step = new Promise<void>((done, fail) => this.stepWaiters.push({ done, fail }));
    // Now, not after a linger: someone waits (a failure reaches them through stepWaiters).
    if (this.flushing === null) void this.flush().catch(ignore);
    return step;
  }

  /** One activity transaction's worth of batches; false when the buffer was empty. */
  private async flushOnce(): Promise<boolean> {
    const { store, writer } = this;
    const log = this.log as SegmentLog;
    const { flushMaxRows, flushMaxBatches } = this.limits;
    const batches = await readBuffer(store.db, writer.owner, flushMaxRows, flushMaxBatches);
    if (batches.length === 0) {
      this.pendingRows = 0;
      return false;
    }
    const seqs = batches.map((b) => b.seq);
    const encoded = batches.map((b) => {
      const payload = log.get(b.token);
      if (payload === undefined) throw new Error(`ingest: batch ${b.seq} is missing from the ingest log`);
      return encodedOf(payload);
    });
    await writer.apply(encoded, seqs);
    await deleteBuffered(store.db, seqs);
    log.release(batches.map((b) => b.token));
    await writer.forget(seqs);
    this.pendingRows = Math.max(0, this.pendingRows - batches.reduce((n, b) => n + b.rowCount, 0));
    return true;
  }

  /**
   * Resolves once every batch accepted before the call (of the organization, if given) is in the
   * activity store.
   */
  async drain(organizationId?: string): Promise<void> {
    // Nothing this process accepted is waiting, and nothing else writes this store's buffer (one
    // process per DuckDB file; what an earlier one left is settled by opened()): no query needed.
    // The count is raised before the 200 of the batch that raised it is sent.
    if (this.log !== null && this.pendingRows === 0 && this.flushing === null) return;
    await this.opened();
    const { db } = this.store;
    const { owner } = this.writer;
    const through = await lastBuffered(db, owner, organizationId);
    while (through > 0 && (await hasBuffered(db, owner, through, organizationId))) {
      await this.nextStep();
    }
  }

  async close(): Promise<void> {
    this.clearLinger();
    await this.log?.close();
  }
}

/**
 * One buffer per single-writer activity store, keyed by its owner so that wrappers of one store
 * (and of its record store) share it: two flushers of one buffer would write its batches twice. A
 * new session (the store opened again) gets a new one, which recovers first. The record store and
 * writer given first are the ones it uses.
 */
const buffers = new Map<string, { session: string; buffer: IngestBuffer }>();

function bufferOf(
  store: RecordStore,
  writer: ExclusiveActivityWriter,
  limits: IngestBufferLimits = DEFAULT_INGEST_BUFFER_LIMITS,
): IngestBuffer {
  let known = buffers.get(writer.owner);
  if (known?.session !== writer.session) {
    void known?.buffer.close().catch(() => undefined); // the store was opened again
    const buffer = new IngestBuffer(store, writer, limits);
    known = { session: writer.session, buffer };
    buffers.set(writer.owner, known);
    // Reads of the store wait for what was accepted before them.
    writer.beforeRead((organizationId) => buffer.drain(organizationId));
  }
  return known.buffer;
}

/** Accepts a prepared batch on a single-writer store; resolves to the number of rows accepted. */
export function writeExclusive(
  store: RecordStore,
  writer: ExclusiveActivityWriter,
  organizationId: string,
  batch: PreparedBatch,
  offer?: AcceptedOffer,
  alsoInTransaction?: (trx: Db) => Promise<void>,
): Promise<number> {
  return bufferOf(store, writer).accept(organizationId, batch, offer, alsoInTransaction);
}

/**
 * Starts the buffer of a single-writer store at once (the server does at start): batches an
 * earlier process accepted and did not flush are written, and reads wait for them. `limits`
 * apply when this call creates the buffer (the first use of this store session).
 */
export function startIngestBuffer(
  store: RecordStore,
  writer: ExclusiveActivityWriter,
  limits: Partial<IngestBufferLimits> = {},
): Promise<void> {
  return bufferOf(store, writer, { ...DEFAULT_INGEST_BUFFER_LIMITS, ...limits }).flush();
}

/** Waits until every batch accepted so far is in the activity store (CLI commands before exit). */
export function drainIngestBuffer(store: RecordStore, writer: ExclusiveActivityWriter): Promise<void> {
  return bufferOf(store, writer).drain();
}
