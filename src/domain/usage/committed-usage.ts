import type { Transaction } from "kysely";
import type { RecordStore } from "../../stores/record-store.js";
import type { Database } from "../../stores/schema.js";
import {
  readKeyAndWorkspaceUsageCommitted,
  zeroTotals,
  type CounterRow,
  type KeyAndWorkspaceTotals,
  type LedgerScope,
  type WindowTotals,
} from "./ledger.js";
import { windowIndex, type WindowKind } from "./windows.js";

/**
 * A copy is read again from the store once it is this old, in case something wrote the ledger
 * without passing through `noteWrite` (nothing in this codebase does; an operator's SQL might).
 */
export const COMMITTED_USAGE_TTL_MS = 1_000;
/** Keys and workspaces kept at most; the copies read longest ago are dropped first. */
export const COMMITTED_USAGE_MAX_SCOPES = 50_000;

const KINDS: readonly WindowKind[] = ["day", "week", "month", "all"];

interface Copy {
  /** The window indexes the totals belong to (KINDS order). */
  indexes: number[];
  totals: WindowTotals;
  readAtMs: number;
}

type Owned = Required<Pick<RecordStore, "db" | "readCommitted" | "afterTransaction">>;

/**
 * The committed current-window totals of keys and workspaces, kept in memory by the process that
 * owns the record store (SQLite in a file), so that a reservation reads no table (bench/gateway.ts:
 * the read was 9 % of a busy gateway's main thread).
 *
 * Exact, not eventually right: every ledger write announces its counter rows (`noteWrite`, inside
 * its transaction, before the write), and they are added to the copy when the transaction commits
 * (`afterTransaction`), dropped when it does not. A copy is read from the store only while no
 * transaction in flight writes its key or workspace, so it never holds part of a write: while one
 * does, a missing copy is read through and not kept. A copy that exists lacks exactly the writes
 * still in flight, as the store's committed data does until they commit (and the gateway's own
 * charge is still counted by its hold until then: src/gateway/reservations/memory-store.ts).
 */
export class CommittedUsage {
  private readonly copies = new Map<string, Copy>();
  /** Scope → transactions in flight that write it. */
  private readonly writers = new Map<string, number>();

  constructor(
    private readonly store: Owned,
    private readonly nowMs: () => number = Date.now,
    private readonly ttlMs = COMMITTED_USAGE_TTL_MS,
    private readonly maxScopes = COMMITTED_USAGE_MAX_SCOPES,
  ) {}

  /**
   * Current-window totals of a key and a workspace (either null: not needed, zeros), as
   * committed. Synchronous. The objects are the copies themselves: read them before the next await.
   */
  totals(keyHash: string | null, workspaceId: string | null, now: Date): KeyAndWorkspaceTotals {
    const indexes = KINDS.map((k) => windowIndex(k, now));
    const atMs = this.nowMs();
    const key = keyHash === null ? null : this.fresh(scopeOf("key", keyHash), indexes, atMs);
    const workspace =
      workspaceId === null ? null : this.fresh(scopeOf("workspace", workspaceId), indexes, atMs);
    const readKey = keyHash !== null && key === null ? keyHash : null;
    const readWorkspace = workspaceId !== null && workspace === null ? workspaceId : null;
    if (readKey === null && readWorkspace === null) {
      return { key: key ?? zeroTotals(), workspace: workspace ?? zeroTotals() };
    }
    const read = readKeyAndWorkspaceUsageCommitted(this.store, readKey, readWorkspace, now)!;
    if (readKey !== null) this.keep(scopeOf("key", readKey), indexes, read.key, atMs);
    if (readWorkspace !== null) this.keep(scopeOf("workspace", readWorkspace), indexes, read.workspace, atMs);
    return { key: key ?? read.key, workspace: workspace ?? read.workspace };
  }

  /**
   * Announces counter rows that `trx` is about to add to the ledger: call inside the transaction,
   * before the write. They reach the copies if and when it commits.
   */
  noteWrite(trx: Transaction<Database>, rows: readonly CounterRow[]): void {
    if (rows.length === 0) return;
    const scopes = new Set(rows.map((r) => scopeOf(r.scope, r.scope_id)));
    for (const s of scopes) this.writers.set(s, (this.writers.get(s) ?? 0) + 1);
    this.store.afterTransaction(trx, (committed) => {
      for (const s of scopes) {
        const n = (this.writers.get(s) ?? 1) - 1;
        if (n === 0) this.writers.delete(s);
        else this.writers.set(s, n);
      }
      if (!committed) return;
      for (const r of rows) {
        const copy = this.copies.get(scopeOf(r.scope, r.scope_id));
        if (copy === undefined || copy.indexes[KINDS.indexOf(r.window)] !== r.window_index) continue;
        const t = copy.totals[r.window];
        t.usage += r.usage_nano;
        t.byok += r.byok_nano;
      }
    });
  }

  /** Keys and workspaces with a copy (tests and diagnostics). */
  get size(): number {
    return this.copies.size;
  }

  private fresh(scope: string, indexes: readonly number[], atMs: number): WindowTotals | null {
    const copy = this.copies.get(scope);
    if (copy === undefined) return null;
    if (atMs - copy.readAtMs >= this.ttlMs || copy.indexes.some((x, i) => x !== indexes[i])) {
      this.copies.delete(scope);
      return null;
    }
    return copy.totals;
  }

  private keep(scope: string, indexes: number[], totals: WindowTotals, atMs: number): void {
    // A write in flight may or may not be in what was just read: not kept (read through).
    if (this.writers.has(scope)) return;
    if (this.copies.size >= this.maxScopes) {
      this.copies.delete(this.copies.keys().next().value as string);
    }
    this.copies.set(scope, { indexes, totals, readAtMs: atMs });
  }
}

const scopeOf = (scope: LedgerScope, id: string): string => `${scope}\u0000${id}`;

/** Keyed by the store's transaction hook: wrappers of one store (`{ ...store }`) share its copy. */
const owned = new WeakMap<object, CommittedUsage>();

/**
 * The store's CommittedUsage, or null where the process does not own its store (no committed-data
 * connection or no transaction hook: PostgreSQL, SQLite in memory). One per store, so that every
 * ledger writer of the process announces to the copy the gateway reads.
 */
export function committedUsageOf(store: RecordStore): CommittedUsage | null {
  const { db, readCommitted, afterTransaction } = store;
  if (readCommitted === undefined || afterTransaction === undefined) return null;
  let usage = owned.get(afterTransaction);
  if (usage === undefined) {
    usage = new CommittedUsage({ db, readCommitted, afterTransaction });
    owned.set(afterTransaction, usage);
  }
  return usage;
}
