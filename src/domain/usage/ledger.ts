import { chunksOf } from "../../lib/chunks.js";
import type { Db, RecordStore } from "../../stores/record-store.js";
import { sql, type CompiledQuery, type Expression, type ExpressionBuilder, type SqlBool } from "kysely";
import { NANOS_PER_USD, toBigInt } from "../../lib/money.js";
import { invalid, type DomainError } from "../errors.js";
import type { DialectCaps } from "../../stores/dialect.js";
import { jsonRows } from "../../stores/sqlite/json-rows.js";
import { QueryTemplate } from "../../stores/query-template.js";
import { windowIndex, type WindowKind } from "./windows.js";

/**
 * The usage ledger: nano-USD counters per (scope, id, window kind, window index), credits and BYOK
 * apart. Ingest adds to it once per accepted generation, in the transaction that records the
 * generation's id; reads take the windows that contain "now".
 */
export type LedgerScope = "key" | "workspace";

export interface Totals {
  usage: bigint;
  byok: bigint;
}

export type WindowTotals = Record<WindowKind, Totals>;

const KINDS: WindowKind[] = ["day", "week", "month", "all"];

export const zeroTotals = (): WindowTotals => ({
  day: { usage: 0n, byok: 0n },
  week: { usage: 0n, byok: 0n },
  month: { usage: 0n, byok: 0n },
  all: { usage: 0n, byok: 0n },
});

/** Current-window totals for each id (ids without activity get zeros). */
export async function readUsage(
  db: Db,
  scope: LedgerScope,
  ids: readonly string[],
  now: Date,
): Promise<Map<string, WindowTotals>> {
  const unique = [...new Set(ids)];
  if (unique.length === 1) {
    // One key or one workspace (GET /key, a budget read): the statement compiled once.
    const id = unique[0] as string;
    const one = await readKeyAndWorkspaceUsage(
      db,
      scope === "key" ? id : null,
      scope === "key" ? null : id,
      now,
    );
    return new Map([[id, scope === "key" ? one.key : one.workspace]]);
  }
  const out = new Map<string, WindowTotals>(ids.map((id) => [id, zeroTotals()]));
  for (const chunk of chunksOf(unique, 500)) {
    // One term per window kind naming its whole primary key (the ids as an IN list): each is an
    // index search for the current window, never a walk over an id's past windows.
    const rows = await db
      .selectFrom("usage_counters")
      .select(["scope_id", "window", "usage_nano", "byok_nano"])
      .where((eb) =>
        eb.or(
          KINDS.map((k) =>
            eb.and([
              eb("scope", "=", scope),
              eb("scope_id", "in", chunk),
              eb("window", "=", k),
              eb("window_index", "=", windowIndex(k, now)),
            ]),
          ),
        ),
      )
      .execute();
    for (const r of rows) {
      const t = out.get(r.scope_id);
      if (t) t[r.window as WindowKind] = { usage: toBigInt(r.usage_nano), byok: toBigInt(r.byok_nano) };
    }
  }
  return out;
}

/**
 * An organization's lifetime totals: the sum of its workspaces' all-time counters. Every ledger
 * write adds the same amounts to one key and one workspace of the organization, so this is also
 * the sum of its keys' (deleted ones included) all-time totals, in a handful of rows rather than
 * one per key. Summed here, not by the store: the sum of several counters may exceed a 64-bit
 * integer, which SQLite's SUM refuses. The literals match migration 012's partial index.
 */
export async function readOrganizationUsage(
  db: Db,
  organizationId: string,
  workspaceIds: readonly string[],
): Promise<Totals> {
  if (workspaceIds.length === 0) return { usage: 0n, byok: 0n };
  // One primary-key lookup per workspace (scope, id, window, index): no index of its own, which a
  // reservation's lookups of one window could prefer over the primary key.
  const rows = await db
    .selectFrom("usage_counters")
    .select(["usage_nano", "byok_nano"])
    .where("scope", "=", sql.lit("workspace"))
    .where("scope_id", "in", workspaceIds)
    .where("window", "=", sql.lit("all"))
    .where("window_index", "=", 0)
    .where("organization_id", "=", organizationId)
    .execute();
  const out: Totals = { usage: 0n, byok: 0n };
  for (const r of rows) {
    out.usage += toBigInt(r.usage_nano);
    out.byok += toBigInt(r.byok_nano);
  }
  return out;
}

/**
 * readKeyAndWorkspaceUsage's statement, compiled once per shape ("key", "workspace", "both"):
 * it runs before every reservation.
 */
const keyAndWorkspaceUsage = new QueryTemplate(
  (
    db: Db,
    shape,
    keyHash: string,
    workspaceId: string,
    day: number,
    week: number,
    month: number,
    all: number,
  ) => {
    const indexes: Record<WindowKind, number> = { day, week, month, all };
    return db
      .selectFrom("usage_counters")
      .select(["scope", "scope_id", "window", "usage_nano", "byok_nano"])
      .where((eb) =>
        currentWindowsMatch(
          eb,
          "usage_counters",
          shape !== "workspace" ? keyHash : null,
          shape !== "key" ? workspaceId : null,
          indexes,
        ),
      )
      .compile();
  },
);

/**
 * The rows of `table` (usage_counters, or an alias of it) that are the current windows of a key
 * and a workspace (either null: not wanted). Up to eight terms, each naming a whole primary key:
 * eight point lookups, whatever the number of past windows (a term per scope alone made the
 * engine walk every day, week and month the key or workspace ever had, about 20 times slower
 * after a year of use: bench/experiments/ledger-read.ts).
 */
export function currentWindowsMatch<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  table: string,
  keyHash: string | null,
  workspaceId: string | null,
  indexes: Record<WindowKind, number>,
): Expression<SqlBool> {
  const scopes: [LedgerScope, string][] = [
    ...(keyHash !== null ? [["key", keyHash] as [LedgerScope, string]] : []),
    ...(workspaceId !== null ? [["workspace", workspaceId] as [LedgerScope, string]] : []),
  ];
  const col = (name: string) => sql.ref(`${table}.${name}`);
  return eb.or(
    scopes.flatMap(([scope, id]) =>
      KINDS.map((k) =>
        eb.and([
          eb(col("scope"), "=", scope),
          eb(col("scope_id"), "=", id),
          eb(col("window"), "=", k),
          eb(col("window_index"), "=", indexes[k]),
        ]),
      ),
    ),
  );
}

/** The index of each window kind's current window at `now`. */
export function currentWindowIndexes(now: Date): Record<WindowKind, number> {
  return {
    day: windowIndex("day", now),
    week: windowIndex("week", now),
    month: windowIndex("month", now),
    all: windowIndex("all", now),
  };
}

export type KeyAndWorkspaceTotals = { key: WindowTotals; workspace: WindowTotals };
type Nano = string | number | bigint | null;
export type UsageRow = { scope: string; window: string; usage_nano: Nano; byok_nano: Nano };

function usageArgs(keyHash: string | null, workspaceId: string | null, now: Date) {
  const { day, week, month, all } = currentWindowIndexes(now);
  const shape = keyHash === null ? "workspace" : workspaceId === null ? "key" : "both";
  return [shape, keyHash ?? "", workspaceId ?? "", day, week, month, all] as const;
}

export function totalsOf(rows: readonly UsageRow[]): KeyAndWorkspaceTotals {
  const out = { key: zeroTotals(), workspace: zeroTotals() };
  for (const r of rows) {
    const t = r.scope === "key" ? out.key : out.workspace;
    t[r.window as WindowKind] = { usage: toBigInt(r.usage_nano), byok: toBigInt(r.byok_nano) };
  }
  return out;
}

/**
 * Current-window totals of one key and one workspace (either may be null: not needed), in one
 * statement: the gateway reads both before every reservation.
 */
export async function readKeyAndWorkspaceUsage(
  db: Db,
  keyHash: string | null,
  workspaceId: string | null,
  now: Date,
): Promise<KeyAndWorkspaceTotals> {
  if (keyHash === null && workspaceId === null) return totalsOf([]);
  const { rows } = await keyAndWorkspaceUsage.execute(db, ...usageArgs(keyHash, workspaceId, now));
  return totalsOf(rows);
}

/**
 * The same read, synchronously, on the store's committed-data connection (`readCommitted`), or
 * null where the store has none: the reservation then needs no await, so nothing interleaves
 * with it and it never waits for a transaction in flight.
 */
export function readKeyAndWorkspaceUsageCommitted(
  store: Pick<RecordStore, "db" | "readCommitted">,
  keyHash: string | null,
  workspaceId: string | null,
  now: Date,
): KeyAndWorkspaceTotals | null {
  if (!store.readCommitted) return null;
  if (keyHash === null && workspaceId === null) return totalsOf([]);
  return totalsOf(store.readCommitted(keyAndWorkspaceUsageQuery(store.db, keyHash, workspaceId, now)));
}

/** The statement both reads above run, compiled with its values (also for its query-plan test). */
export function keyAndWorkspaceUsageQuery(
  db: Db,
  keyHash: string | null,
  workspaceId: string | null,
  now: Date,
): CompiledQuery<UsageRow> {
  return keyAndWorkspaceUsage.bind(db, ...usageArgs(keyHash, workspaceId, now));
}

export interface UsageEntry {
  organizationId: string;
  keyHash: string;
  workspaceId: string;
  at: Date;
  usageNano: bigint;
  byokNano: bigint;
}

/** Adds one generation's cost to every window of its key and its workspace. Call inside a transaction. */
export async function addUsage(db: Db, e: UsageEntry): Promise<void> {
  const rows = (["key", "workspace"] as const).flatMap((scope) =>
    KINDS.map((k) => ({
      scope,
      scope_id: scope === "key" ? e.keyHash : e.workspaceId,
      window: k,
      window_index: windowIndex(k, e.at),
      organization_id: e.organizationId,
      usage_nano: e.usageNano,
      byok_nano: e.byokNano,
    })),
  );
  await db
    .insertInto("usage_counters")
    .values(rows)
    .onConflict((oc) =>
      oc.columns(["scope", "scope_id", "window", "window_index"]).doUpdateSet((eb) => ({
        usage_nano: eb("usage_counters.usage_nano", "+", eb.ref("excluded.usage_nano")),
        byok_nano: eb("usage_counters.byok_nano", "+", eb.ref("excluded.byok_nano")),
      })),
    )
    .execute();
}

export interface CounterRow {
  scope: LedgerScope;
  scope_id: string;
  window: WindowKind;
  window_index: number;
  organization_id: string;
  usage_nano: bigint;
  byok_nano: bigint;
}

const DAY_MS = 86_400_000;

interface DaySums {
  org: string;
  usage: bigint;
  byok: bigint;
}

/**
 * Usage of many generations summed before it is written: first per (key, workspace, UTC day),
 * since every window kind is a function of the day; then per counter. No per-generation objects.
 */
export class UsageTally {
  /** keyHash → workspaceId → day → sums (and the organization of the first entry). */
  private readonly perDay = new Map<string, Map<string, Map<number, DaySums>>>();

  add(
    organizationId: string,
    keyHash: string,
    workspaceId: string,
    atMs: number,
    usage: bigint,
    byok: bigint,
  ): void {
    const day = Math.floor(atMs / DAY_MS);
    let byWorkspace = this.perDay.get(keyHash);
    if (!byWorkspace) this.perDay.set(keyHash, (byWorkspace = new Map<string, Map<number, DaySums>>()));
    let byDay = byWorkspace.get(workspaceId);
    if (!byDay) byWorkspace.set(workspaceId, (byDay = new Map<number, DaySums>()));
    const sums = byDay.get(day);
    if (sums) {
      sums.usage += usage;
      sums.byok += byok;
    } else byDay.set(day, { org: organizationId, usage, byok });
  }

  /** The counter rows to add, one per (scope, id, window, window index). */
  rows(): CounterRow[] {
    const sums = new Map<string, CounterRow>();
    for (const [keyHash, byWorkspace] of this.perDay) {
      for (const [workspaceId, byDay] of byWorkspace) {
        for (const [day, d] of byDay) {
          const at = new Date(day * DAY_MS);
          for (const scope of ["key", "workspace"] as const) {
            const scopeId = scope === "key" ? keyHash : workspaceId;
            for (const k of KINDS) {
              const index = windowIndex(k, at);
              const id = `${scope}\u0000${scopeId}\u0000${k}\u0000${index}`;
              const row = sums.get(id);
              if (row) {
                row.usage_nano += d.usage;
                row.byok_nano += d.byok;
              } else {
                sums.set(id, {
                  scope,
                  scope_id: scopeId,
                  window: k,
                  window_index: index,
                  organization_id: d.org,
                  usage_nano: d.usage,
                  byok_nano: d.byok,
                });
              }
            }
          }
        }
      }
    }
    return [...sums.values()];
  }
}

/**
 * The most a counter holds: its column is a 64-bit integer of nano-USD (9223372036.854775807 USD).
 * A record may carry 1e9 USD in each of two fields, so a few records can reach it.
 */
export const MAX_COUNTER_NANO = 2n ** 63n - 1n;

/**
 * A write that would take a counter past MAX_COUNTER_NANO: refused (the caller's transaction then
 * records nothing) rather than left to the store, which refuses the value (PostgreSQL, and both
 * drivers for a parameter) or silently turns the sum into an inexact float (SQLite).
 */
export const ledgerFull = (): DomainError =>
  invalid(
    "generations: usage and byok_usage_inference would take a key's or workspace's total past " +
      `${MAX_COUNTER_NANO / NANOS_PER_USD}.${MAX_COUNTER_NANO % NANOS_PER_USD} USD, the most the usage ` +
      "ledger holds; nothing was recorded",
  );

/**
 * Writes a tally: one multi-row upsert per chunk (on SQLite, the rows as one JSON parameter), so a
 * batch of thousands of generations costs a handful of statements. Call inside a transaction.
 * A counter is only updated while the sum fits (the upsert's WHERE): a row left alone is one the
 * statement did not count, and the write is then refused with ledgerFull (no extra read).
 */
const addJsonRows = new QueryTemplate((db: Db, _shape, json: string) =>
  sql`
      INSERT INTO usage_counters (scope, scope_id, "window", window_index, organization_id, usage_nano, byok_nano)
      SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6
      FROM json_each(${json}) WHERE true
      ON CONFLICT (scope, scope_id, "window", window_index) DO UPDATE SET
        usage_nano = usage_counters.usage_nano + excluded.usage_nano,
        byok_nano = usage_counters.byok_nano + excluded.byok_nano
      WHERE usage_counters.usage_nano <= ${sql.raw(MAX_COUNTER_NANO.toString())} - excluded.usage_nano
        AND usage_counters.byok_nano <= ${sql.raw(MAX_COUNTER_NANO.toString())} - excluded.byok_nano`.compile(
    db,
  ),
);

export async function addUsageTally(
  db: Db,
  tally: UsageTally | readonly CounterRow[],
  caps?: DialectCaps,
): Promise<void> {
  const rows = tally instanceof UsageTally ? tally.rows() : tally;
  if (rows.length === 0) return;
  // A batch's own sums past the limit never reach the store (the drivers refuse such a value).
  for (const r of rows) {
    if (r.usage_nano > MAX_COUNTER_NANO || r.byok_nano > MAX_COUNTER_NANO) throw ledgerFull();
  }
  const json = caps?.bulkRowsAsJson
    ? jsonRows(
        rows.map((r) => [
          r.scope,
          r.scope_id,
          r.window,
          r.window_index,
          r.organization_id,
          r.usage_nano,
          r.byok_nano,
        ]),
      )
    : null;
  if (json !== null) {
    const { numAffectedRows } = await addJsonRows.execute(db, "", json);
    if (numAffectedRows !== undefined && numAffectedRows !== BigInt(rows.length)) throw ledgerFull();
    return;
  }
  const max = sql.raw(MAX_COUNTER_NANO.toString());
  for (const chunk of chunksOf(rows, 500)) {
    const [result] = await db
      .insertInto("usage_counters")
      .values(chunk)
      .onConflict((oc) =>
        oc
          .columns(["scope", "scope_id", "window", "window_index"])
          .doUpdateSet((eb) => ({
            usage_nano: eb("usage_counters.usage_nano", "+", eb.ref("excluded.usage_nano")),
            byok_nano: eb("usage_counters.byok_nano", "+", eb.ref("excluded.byok_nano")),
          }))
          .where(
            sql<SqlBool>`usage_counters.usage_nano <= ${max} - excluded.usage_nano
              AND usage_counters.byok_nano <= ${max} - excluded.byok_nano`,
          ),
      )
      .execute();
    const affected = result?.numInsertedOrUpdatedRows;
    if (affected !== undefined && affected !== BigInt(chunk.length)) throw ledgerFull();
  }
}

/** addUsage for many generations at once, with the same result (see UsageTally, addUsageTally). */
export async function addUsageBatch(
  db: Db,
  entries: readonly UsageEntry[],
  caps?: DialectCaps,
): Promise<void> {
  const tally = new UsageTally();
  for (const e of entries) {
    tally.add(e.organizationId, e.keyHash, e.workspaceId, e.at.getTime(), e.usageNano, e.byokNano);
  }
  await addUsageTally(db, tally, caps);
}
