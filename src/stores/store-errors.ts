/**
 * How a store's failures are told apart: a broken rule in the data (a unique key taken), and a
 * store that cannot answer now (no connection in time, too many clients, shutting down, busy).
 * The second is the operator's problem, not the caller's and not a bug: the API answers 503 with
 * Retry-After, so clients back off and retry instead of seeing a 500.
 */

/** The record store could not be reached in time, or refused the connection. */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super("the record store is unavailable", { cause });
    this.name = "StoreUnavailableError";
  }
}

/** A unique-constraint violation from either engine (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE";
}

/**
 * SQLSTATEs and driver codes that mean "not now": PostgreSQL's connection exceptions (class 08),
 * insufficient resources (class 53: too many connections, out of memory or disk), operator
 * intervention (57P01-57P03: shutdown, cannot connect now), a lock not obtained in time (55P03),
 * serialization failures and deadlocks (40001, 40P01: the transaction was rolled back whole);
 * SQLite's busy and locked after its busy timeout; a refused or reset socket.
 */
const TRANSIENT_CODES = new Set([
  "40001",
  "40P01",
  "55P03",
  "57P01",
  "57P02",
  "57P03",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
]);

/**
 * node-postgres's errors for a connection lost in the middle of a query carry no code, only these
 * messages ("Connection terminated unexpectedly", and "Connection terminated" while ending).
 */
const PG_CONNECTION_LOST = /^Connection terminated\b/;

/** Whether a failure is the store's momentary unavailability (answer 503, retry later). */
export function isStoreUnavailable(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") {
    return err instanceof Error && code === undefined && PG_CONNECTION_LOST.test(err.message);
  }
  return TRANSIENT_CODES.has(code) || code.startsWith("08") || code.startsWith("53");
}
