import type { ActivityRow, ClassificationRow } from "../activity/activity-row.js";

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
}

export class ActivityTimeoutError extends Error {
  constructor() {
    super("activity query exceeded its time limit");
    this.name = "ActivityTimeoutError";
  }
}

/**
 * The analytics (OLAP) store: DuckDB embedded, or ClickHouse (a server, or the in-process engine in
 * tests). It holds generations and their classifier tags for analytics. Which ids were accepted,
 * and usage counters, live in the record store; this store is written after those are decided.
 */
export interface ActivityStore {
  readonly dialect: AnalyticsDialect;
  /**
   * Writes generations and tags. Idempotent for (organization_id, id): rows whose id is already
   * present are replaced, never doubled, so a retried batch after a crash is harmless.
   */
  insert(rows: readonly ActivityRow[], tags: readonly ClassificationRow[]): Promise<void>;
  /** Runs a compiled query; rows are plain objects (bigint for 64-bit integers, number for floats). */
  query(q: BoundQuery, opts: QueryOptions): Promise<Record<string, unknown>[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
