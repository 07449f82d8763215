import fs, { mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";

/*
 * Payloads by token in append-only segment files, and in memory for whoever reads them back. Two
 * users: the embedded store's ingest log (ingest-buffer.ts: batches accepted and not yet in DuckDB,
 * in a directory next to the DuckDB file; the record store's ingest_buffer row names a payload by
 * its token, and the payload is appended before that row commits) and the gateway's recording
 * journal (src/gateway/recording/journal.ts: answered generations whose records are not committed yet).
 * An append is in the file once it resolves: written to the OS, it survives the process being
 * killed; with `sync`, fdatasync'ed too. A segment is deleted once none of its payloads is needed.
 *
 * Record: a JSON line `{"t":token,"b":byteLength}`, the payload's UTF-8 bytes, a newline. A last
 * record cut short (the process died while writing it) ends the file's reading.
 */

export interface SegmentLogOptions {
  /** File name suffix of the segments (default `.ingest`); other files in the directory are ignored. */
  suffix?: string;
  /**
   * Keep appended payloads in memory for `get` (default true: the ingest log's flusher reads
   * them). The journal's payloads are read only after a restart, so it keeps none.
   */
  keepAppended?: boolean;
  /**
   * A segment takes appends until it is this large, then a new one starts (default 64 MiB). A
   * segment is deleted once none of its payloads is needed, so smaller segments keep less of
   * what was released on disk (all of which a reader after a crash reads back).
   */
  segmentBytes?: number;
  /**
   * Appends without `sync` made in the same turn of the event loop go out together in one write at
   * the end of the turn (setImmediate), each resolving once that write is done (default false).
   * For the journal: under load several answers finish per turn (3.4 on average at saturation on
   * the 2-core VM of docs/performance.md), each one a system call of its own otherwise. Not for
   * the ingest log, whose append is made inside a record-store transaction that must not wait.
   */
  gatherTurn?: boolean;
}

/** Appends gathered into one write at most (gatherTurn): a bound on the write's size. */
const GATHER_MAX = 256;

/**
 * Writes up to this size (a payload, or the journal's appends of one turn) are made with a
 * synchronous `writev` (into the OS's page cache, as SQLite's own WAL writes on the same thread
 * are), not on libuv's thread pool: for the gateway's records, usually a few KiB, the pool's round
 * trip (a thread woken, then the event loop) cost more than the write. Larger writes (a big
 * POST /activity batch) and synced appends stay on the pool.
 */
const SYNC_WRITE_MAX = 64 * 1024;
const SEGMENT_BYTES = 64 * 1024 * 1024;
/**
 * Segments named in this process so far: with the time and the process id, a new segment's name
 * is unique, also when a log is reopened in the same millisecond (a store closed and opened
 * again) and would otherwise append to the segment it just closed.
 */
let segmentCounter = 0;

interface Segment {
  name: string;
  /** Tokens of the segment whose payloads are still needed. */
  live: Set<string>;
}

export class SegmentLog {
  private readonly payloads = new Map<string, { payload: string | null; segment: Segment | null }>();
  private readonly segments: Segment[] = [];
  private current: { segment: Segment; file: FileHandle; bytes: number } | null = null;
  private appending: Promise<unknown> = Promise.resolve();
  /** The appends of this turn waiting for their write (gatherTurn), or null. */
  private gathering: { entries: [string, string][]; written: Promise<void> } | null = null;
  /** Writes made so far (tests and diagnostics). */
  writes = 0;

  private readonly suffix: string;
  private readonly keepAppended: boolean;
  private readonly segmentBytes: number;
  private readonly gatherTurn: boolean;

  private constructor(
    private readonly dir: string | null,
    opts: SegmentLogOptions,
  ) {
    this.suffix = opts.suffix ?? ".ingest";
    this.keepAppended = opts.keepAppended ?? true;
    this.segmentBytes = opts.segmentBytes ?? SEGMENT_BYTES;
    this.gatherTurn = opts.gatherTurn ?? false;
  }

  /**
   * Opens the log of a store: `dir` for its files (created if missing), or null for a log in
   * memory only (a store in memory). Reads the payloads the files hold.
   */
  static open(dir: string | null, opts: SegmentLogOptions = {}): SegmentLog {
    const log = new SegmentLog(dir, opts);
    if (dir === null) return log;
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)
      .filter((n) => n.endsWith(log.suffix))
      .sort()) {
      const segment: Segment = { name, live: new Set() };
      for (const [token, payload] of readSegment(readFileSync(join(dir, name)))) {
        log.payloads.set(token, { payload, segment });
        segment.live.add(token);
      }
      log.segments.push(segment);
    }
    return log;
  }

  /** Keeps only these tokens' payloads (recovery: the batches still buffered); deletes the rest. */
  retain(tokens: ReadonlySet<string>): void {
    this.release([...this.payloads.keys()].filter((t) => !tokens.has(t)));
  }

  /** Writes a payload; resolves once it is in the file (and synced, with `sync`). */
  async append(token: string, payload: string, sync: boolean): Promise<void> {
    if (this.gatherTurn && !sync) return this.appendGathered(token, payload);
    const run = this.appending.then(() => this.write([[token, payload]], sync));
    this.appending = run.catch(() => undefined);
    await run;
  }

  /** Joins this turn's write (gatherTurn), starting it if this is the turn's first append. */
  private appendGathered(token: string, payload: string): Promise<void> {
    let batch = this.gathering;
    if (!batch || batch.entries.length >= GATHER_MAX) {
      const entries: [string, string][] = [];
      const turnEnds = new Promise<void>((done) => setImmediate(done));
      const written = this.appending
        .then(() => turnEnds)
        .then(() => {
          // From here on, appends start the next write.
          if (this.gathering?.entries === entries) this.gathering = null;
          return this.write(entries, false);
        });
      this.appending = written.catch(() => undefined);
      batch = this.gathering = { entries, written };
    }
    batch.entries.push([token, payload]);
    return batch.written;
  }

  /** Writes records in one write; resolves once they are in the file (and synced, with `sync`). */
  private async write(entries: readonly [string, string][], sync: boolean): Promise<void> {
    if (this.dir === null) {
      for (const [token, payload] of entries) {
        this.payloads.set(token, { payload: this.keepAppended ? payload : null, segment: null });
      }
      return;
    }
    const parts: Buffer[] = [];
    let bytes = 0;
    for (const [token, payload] of entries) {
      const body = Buffer.from(payload, "utf8");
      const head = Buffer.from(`${JSON.stringify({ t: token, b: body.length })}\n`, "utf8");
      parts.push(head, body, NEWLINE);
      bytes += head.length + body.length + 1;
    }
    if (!this.current || this.current.bytes > this.segmentBytes) await this.rotate();
    const cur = this.current as { segment: Segment; file: FileHandle; bytes: number };
    // A failed or short write may leave a torn record, past which the segment is never read
    // back: the next payload goes to a new segment.
    const torn = () => (cur.bytes = Number.POSITIVE_INFINITY);
    let bytesWritten: number;
    try {
      this.writes++;
      bytesWritten =
        !sync && bytes <= SYNC_WRITE_MAX
          ? fs.writevSync(cur.file.fd, parts)
          : (await cur.file.writev(parts)).bytesWritten;
    } catch (err) {
      torn();
      throw err;
    }
    cur.bytes += bytesWritten;
    if (bytesWritten !== bytes) {
      torn();
      throw new Error("ingest log: short write (disk full?)");
    }
    if (sync) await cur.file.datasync();
    for (const [token, payload] of entries) {
      this.payloads.set(token, { payload: this.keepAppended ? payload : null, segment: cur.segment });
      cur.segment.live.add(token);
    }
  }

  private async rotate(): Promise<void> {
    const dir = this.dir as string;
    const previous = this.current;
    const name = `${Date.now().toString().padStart(15, "0")}-${process.pid}-${(segmentCounter++).toString().padStart(6, "0")}${this.suffix}`;
    const file = await open(join(dir, name), "a");
    const segment: Segment = { name, live: new Set() };
    this.segments.push(segment);
    this.current = { segment, file, bytes: 0 };
    if (previous) {
      await previous.file.close();
      this.collect(previous.segment);
    }
  }

  /**
   * The payloads held and not released, in the order they were read or appended: those read back
   * when the log was opened, and with keepAppended those appended since.
   */
  held(): [token: string, payload: string][] {
    const out: [string, string][] = [];
    for (const [token, p] of this.payloads) if (p.payload !== null) out.push([token, p.payload]);
    return out;
  }

  /** The tokens held and not released, payload kept or not. */
  tokens(): string[] {
    return [...this.payloads.keys()];
  }

  /** A payload appended (kept with keepAppended) or read back, or undefined. */
  get(token: string): string | undefined {
    return this.payloads.get(token)?.payload ?? undefined;
  }

  /** Forgets payloads (written to the activity store, or never accepted). */
  release(tokens: readonly string[]): void {
    const touched = new Set<Segment>();
    for (const t of tokens) {
      const p = this.payloads.get(t);
      if (!p) continue;
      this.payloads.delete(t);
      if (p.segment) {
        p.segment.live.delete(t);
        touched.add(p.segment);
      }
    }
    for (const s of touched) this.collect(s);
  }

  /** Deletes a segment that takes no more appends and holds no needed payload. */
  private collect(segment: Segment): void {
    if (segment.live.size > 0 || segment === this.current?.segment || this.dir === null) return;
    const at = this.segments.indexOf(segment);
    if (at < 0) return;
    this.segments.splice(at, 1);
    try {
      unlinkSync(join(this.dir, segment.name));
    } catch {
      // already gone
    }
  }

  /** Segment files on disk (for tests and operations). */
  files(): string[] {
    return this.segments.map((s) => s.name);
  }

  /** Closes the segment taking appends; deletes it if none of its payloads is needed. */
  async close(): Promise<void> {
    await this.appending;
    const cur = this.current;
    if (!cur) return;
    this.current = null;
    await cur.file.close();
    this.collect(cur.segment);
  }
}

const NEWLINE = Buffer.from("\n");

/** The complete records of a segment's bytes, in order. */
function* readSegment(bytes: Buffer): Generator<[string, string]> {
  let at = 0;
  while (at < bytes.length) {
    const nl = bytes.indexOf(0x0a, at);
    if (nl < 0) return;
    let head: { t?: unknown; b?: unknown };
    try {
      head = JSON.parse(bytes.toString("utf8", at, nl)) as { t?: unknown; b?: unknown };
    } catch {
      return;
    }
    if (typeof head.t !== "string" || typeof head.b !== "number") return;
    const start = nl + 1;
    const end = start + head.b;
    if (end + 1 > bytes.length || bytes[end] !== 0x0a) return; // cut short
    yield [head.t, bytes.toString("utf8", start, end)];
    at = end + 1;
  }
}
