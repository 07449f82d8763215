/**
 * What differs between the record-store engines, as capability flags and type names. Shared code
 * reads these; it never asks which engine it runs on.
 */
export interface DialectCaps {
  name: "sqlite" | "postgres";
  /** `SELECT ... FOR UPDATE` row locks (SQLite serialises every transaction instead). */
  supportsForUpdate: boolean;
  /** Column type of an auto-incrementing 64-bit primary key. */
  autoIncrementType: "integer" | "bigserial";
  /** Column type of a double-precision float. */
  floatType: "real" | "double precision";
  /**
   * Many rows go into one statement as a single JSON text parameter (json_each), not as a
   * multi-row VALUES list: on SQLite binding thousands of values costs more than parsing one text.
   */
  bulkRowsAsJson: boolean;
  /**
   * A commit is on disk when it returns (PostgreSQL; SQLite runs with synchronous=NORMAL), so
   * files written before it (the ingest log) are synced too.
   */
  syncsCommits: boolean;
  /**
   * Committed changes to keys, workspaces and budgets are announced to every connected process
   * (PostgreSQL NOTIFY from triggers, migration 008); SQLite has one server process and none.
   */
  changeNotifications: boolean;
  /**
   * `JOIN LATERAL`: a subquery per row of the outer table, limited on its own (PostgreSQL; SQLite
   * has none). The Broadcast poll reads a bounded slice of each destination's due rows with it.
   */
  lateralJoins: boolean;
  /**
   * `CREATE STATISTICS`: the planner learns which values of two columns go together (PostgreSQL;
   * SQLite's planner takes no such hint). Without it PostgreSQL takes a live destination's few
   * pending rows for a fair share of a table full of another's backlog (migration 010).
   */
  extendedStatistics: boolean;
}

export const SQLITE_CAPS: DialectCaps = {
  name: "sqlite",
  supportsForUpdate: false,
  autoIncrementType: "integer",
  floatType: "real",
  bulkRowsAsJson: true,
  syncsCommits: false,
  changeNotifications: false,
  lateralJoins: false,
  extendedStatistics: false,
};

export const POSTGRES_CAPS: DialectCaps = {
  name: "postgres",
  supportsForUpdate: true,
  autoIncrementType: "bigserial",
  floatType: "double precision",
  bulkRowsAsJson: false,
  syncsCommits: true,
  changeNotifications: true,
  lateralJoins: true,
  extendedStatistics: true,
};
