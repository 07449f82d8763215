import type { ActivityRow, ClassificationRow } from "../activity/activity-row.js";
import type { FeedbackRow } from "../activity/feedback-row.js";
import type { EncodedActivity } from "./column-texts.js";

/** SQL dialects of the analytics compiler. */
export type AnalyticsDialect = "duckdb" | "clickhouse";

/** A bound query: SQL text from the compiler plus named parameter values. */
export interface BoundQuery {
  sql: string;
  /** Named parameters; the dialect decides the placeholder syntax ($name or {name:Type}). */
  params: Record<string, string | number | bigint | boolean | null | readonly (string | number)[]>;
}

export interface QueryOptions {
  /** Cancel the engine query past this time; the promise rejects with ActivityTimeoutError. */
  timeoutMs: number;
  /**
   * The one organization the query reads, if it reads one: a store with an ingest buffer then
   * waits only for that organization's accepted batches (read-your-writes), not for all.
   */
  organizationId?: string;
}

/** Where a page of ActivityStore.generationsForReplay starts: after this generation. */
export interface ReplayCursor {
  createdAtMs: number;
  id: string;
}

/** A page of one workspace's generations in a time range, for a Broadcast replay. */
export interface ReplayPageQuery {
  organizationId: string;
  /** The workspace's generations, and the organization's generations of no workspace (older records). */
  workspaceId: string;
  /** created_at in [fromMs, toMs). */
  fromMs: number;
  toMs: number;
  /** The last generation of the previous page; null for the first page. */
  after: ReplayCursor | null;
  /** Generations in the page at most. */
  limit: number;
}

export class ActivityTimeoutError extends Error {
  constructor() {
    super("activity query exceeded its time limit");
    this.name = "ActivityTimeoutError";
  }
}

/**
 * The analytics (OLAP) store: DuckDB embedded, or ClickHouse (a server, or the in-process engine in
 * tests). It holds generations, their classifier tags and the feedback on them for analytics.
 * Which ids were accepted, usage counters and feedback itself live in the record store; this
 * store is written after those are decided.
 */
export interface ActivityStore {
  readonly dialect: AnalyticsDialect;
  /**
   * Writes generations and tags. Idempotent for (organization_id, id): a row whose id the store
   * already holds is skipped (first write wins), and so are the tags of a generation that already
   * has tags; a repeated id inside one call keeps its first row. A batch retried after a crash
   * between this call and the record-store commit is therefore harmless. The existence check is
   * restricted to the organization and the batch's created_at range, so it prunes by zone maps
   * (DuckDB) or the primary key (ClickHouse).
   */
  insert(rows: readonly ActivityRow[], tags: readonly ClassificationRow[]): Promise<void>;
  /**
   * Writes feedback submissions (table `generation_feedback`). Idempotent for (organization_id,
   * feedback_id) as insert is for generations: a row already held is skipped, a repeated id inside
   * one call keeps its first row; the check is restricted to the organization and the rows'
   * created_at range (their generations' times). The record store's queue calls it
   * (src/domain/generation-feedback/feedback-activity.ts) and may call it again after a crash.
   */
  insertFeedback(rows: readonly FeedbackRow[]): Promise<void>;
  /**
   * Runs a compiled query. Every engine returns the same representation, column by column:
   * - 64-bit and wider integers (DuckDB BIGINT/HUGEINT/UBIGINT, ClickHouse Int64/UInt64/Int128...,
   *   so every count() and every sum() of an integer column) → bigint;
   * - narrower integers, floats and decimals → number;
   * - timestamps and dates (TIMESTAMP, DATE, DateTime, DateTime64, Date) → ISO 8601 UTC string
   *   with milliseconds, `2026-11-16T00:00:00.000Z`;
   * - strings → string, booleans → boolean, SQL NULL → null, lists/arrays → arrays of the above.
   * Column order follows the SELECT list. The SQL must not carry its own SETTINGS or FORMAT clause
   * (the ClickHouse adapters append them). Past opts.timeoutMs the engine query is cancelled
   * (DuckDB interrupt; ClickHouse max_execution_time plus KILL QUERY on a server) and the promise
   * rejects with ActivityTimeoutError.
   */
  query(q: BoundQuery, opts: QueryOptions): Promise<Record<string, unknown>[]>;
  /**
   * A page of the generations a Broadcast replay re-offers, as ActivityRows (money as bigint),
   * ordered by (created_at, id); the next page starts after the last row of this one. Each engine
   * writes its own SQL. Past opts.timeoutMs: ActivityTimeoutError, as for query.
   */
  generationsForReplay(page: ReplayPageQuery, opts: { timeoutMs: number }): Promise<ActivityRow[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Present when one process alone writes this store (embedded DuckDB: the file is locked): the
   * ingest path that accepts batches into a buffer in the record store and writes them here in
   * larger transactions (src/domain/ingest/pipeline/ingest-buffer.ts). Absent on ClickHouse.
   */
  readonly exclusive?: ExclusiveActivityWriter;
}

/** Buffered writes of a single-writer activity store; see ActivityStore.exclusive. */
export interface ExclusiveActivityWriter {
  /** Identifies this store in the record store's buffer (host and file). */
  readonly owner: string;
  /**
   * Identifies this open handle of the store (new at every open): a new handle recovers the
   * buffer before its first write. Wrappers must pass it through.
   */
  readonly session: string;
  /**
   * A directory of this store's own (beside its file) for the ingest log of batches accepted and
   * not yet written here; null for a store in memory. Wrappers must pass it through.
   */
  readonly logDir: string | null;
  /**
   * Writes encoded batches (rows in the order given) and records their buffer sequence numbers
   * as applied, in one transaction. No existence check: the buffer holds only accepted ids, each
   * once, and a batch whose number is recorded is never applied again.
   */
  apply(batches: readonly EncodedActivity[], seqs: readonly number[]): Promise<void>;
  /** The sequence numbers recorded by apply and not forgotten. */
  applied(): Promise<number[]>;
  /** Forgets sequence numbers (once their buffer rows are deleted). */
  forget(seqs: readonly number[]): Promise<void>;
  /**
   * Registers what every read of this store awaits first: the ingest buffer's drain, so that a
   * query sees every batch accepted before it (read-your-writes), of the query's organization when
   * QueryOptions names one. The last registration wins.
   */
  beforeRead(barrier: (organizationId?: string) => Promise<void>): void;
}
