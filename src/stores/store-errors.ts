/**
 * How a store's failures are told apart: a broken rule in the data (a unique key taken), and a
 * store that cannot answer now (no connection in time, too many clients, shutting down, busy).
 * The second is the operator's problem, not the caller's and not a bug: the API answers 503 with
 * Retry-After, naming the store, so clients back off and retry instead of seeing a 500.
 *
 * A failure is classified at the store's own boundary, where it is known which store failed: a
 * refused or reset socket is wrapped in StoreUnavailableError there (the PostgreSQL pool's
 * connections, the ClickHouse client), never guessed from an error code that reaches the API,
 * which any outbound connection could have raised.
 */

/** The stores whose momentary unavailability the API answers 503 for, as its message names them. */
export type StoreName = "record store" | "activity store";

/** A store could not be reached in time, refused the connection, or lost it mid-statement. */
export class StoreUnavailableError extends Error {
  constructor(
    readonly store: StoreName,
    cause: unknown,
  ) {
    super(`the ${store} is unavailable`, { cause });
    this.name = "StoreUnavailableError";
  }
}

/** A unique-constraint violation from either engine (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE";
}

/**
 * The record store's own codes that mean "not now": PostgreSQL's connection exceptions (class 08),
 * insufficient resources (class 53: too many connections, out of memory or disk), operator
 * intervention (57P01-57P03: shutdown, cannot connect now), a lock not obtained in time (55P03),
 * serialization failures and deadlocks (40001, 40P01: the transaction was rolled back whole);
 * SQLite's busy and locked after its busy timeout. Only the record store's engines use them.
 */
const RECORD_STORE_CODES = new Set([
  "40001",
  "40P01",
  "55P03",
  "57P01",
  "57P02",
  "57P03",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
]);

/** Socket failures: a store's boundary wraps them (isConnectionFailure), the API never reads them. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * node-postgres's errors for a connection lost in the middle of a query carry no code, only these
 * messages ("Connection terminated unexpectedly", and "Connection terminated" while ending).
 */
const PG_CONNECTION_LOST = /^Connection terminated\b/;

/**
 * Whether a driver's error is a lost or refused connection (a socket code, or node-postgres's
 * connection-lost message): for a store's boundary to wrap in StoreUnavailableError.
 */
export function isConnectionFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string") return SOCKET_CODES.has(code);
  return err instanceof Error && code === undefined && PG_CONNECTION_LOST.test(err.message);
}

/**
 * The store that is momentarily unavailable, when that is what a failure is (answer 503, retry
 * later); null for anything else, a bug included.
 */
export function unavailableStore(err: unknown): StoreName | null {
  if (err instanceof StoreUnavailableError) return err.store;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return null;
  return RECORD_STORE_CODES.has(code) || /^(08|53)[0-9A-Z]{3}$/.test(code) ? "record store" : null;
}
