import { sql } from "kysely";
import {
  currentWindowIndexes,
  currentWindowsMatch,
  totalsOf,
  type KeyAndWorkspaceTotals,
  type UsageRow,
} from "../../domain/usage/ledger.js";
import { toBigInt } from "../../lib/money.js";
import type { Db } from "../../stores/record-store.js";
import { QueryTemplate } from "../../stores/query-template.js";
import { dayIndex, windowDays } from "../../domain/usage/windows.js";
import { keyWindow, type Held, type HoldRequest } from "./room.js";

/**
 * In ONE statement: inserts the request's hold (a data-modifying WITH, whose row the statement's
 * own read cannot see), and reads the workspace's other unexpired holds (summed for the workspace
 * in each window of the request, and for the key in its limit's window: a hold counts in the
 * windows of its own request's day) and the key's and workspace's current ledger windows, at one
 * snapshot. A settle commits its charge before it deletes its hold, so any snapshot holds the
 * hold, the charge, or both (which only refuses more), never neither. So a reserve is four round
 * trips (begin, lock, this, commit; five when decide sizes the hold otherwise than expected), two
 * of them with the workspace locked. The holds' one-row aggregate is left-joined to the counters, so a key and
 * workspace with no spend yet still give one row (its counter columns null). Compiled once per
 * shape (which ledger scopes are read: "key", "workspace", "both", "none").
 */
const holdsAndUsage = new QueryTemplate(
  (
    db: Db,
    shape,
    holdId: string,
    organizationId: string,
    workspaceId: string,
    keyHash: string,
    amountNano: bigint,
    countsKey: number,
    countsWorkspace: number,
    expiresAtMs: number,
    nowMs: number,
    day: number,
    week: number,
    month: number,
    all: number,
    holdDay: number,
    keyFirstDay: number,
    keyLastDay: number,
    weekFirstDay: number,
    weekLastDay: number,
    monthFirstDay: number,
    monthLastDay: number,
    memberId: string | null,
  ) => {
    // A hold counts in the windows of its own request's day (where its charge lands); one without
    // a day (taken by an instance older than the column) counts in every window, as before.
    const within = (first: number, last: number) =>
      sql`(day_index is null or day_index between ${first} and ${last})`;
    const heldWs = (days: ReturnType<typeof within> | null) =>
      days === null
        ? sql<string>`coalesce(sum(case when counts_workspace = 1 then amount_nano else 0 end), 0)`
        : sql<string>`coalesce(sum(case when counts_workspace = 1 and ${days} then amount_nano else 0 end), 0)`;
    const holds = db
      .selectFrom("gateway_reservations")
      .select([
        heldWs(within(holdDay, holdDay)).as("held_ws_day"),
        heldWs(within(weekFirstDay, weekLastDay)).as("held_ws_week"),
        heldWs(within(monthFirstDay, monthLastDay)).as("held_ws_month"),
        heldWs(null).as("held_ws_all"),
        sql<string>`coalesce(sum(case when counts_key = 1 and key_hash = ${keyHash} and ${within(keyFirstDay, keyLastDay)} then amount_nano else 0 end), 0)`.as(
          "held_key",
        ),
      ])
      .where("workspace_id", "=", workspaceId)
      .where("expires_at_ms", ">", nowMs);
    const indexes = { day, week, month, all };
    const ledgerKey = shape === "key" || shape === "both" ? keyHash : null;
    const ledgerWorkspace = shape === "workspace" || shape === "both" ? workspaceId : null;
    return db
      .with("hold", (w) =>
        w
          .insertInto("gateway_reservations")
          .values({
            id: holdId,
            organization_id: organizationId,
            key_hash: keyHash,
            workspace_id: workspaceId,
            amount_nano: amountNano,
            counts_key: countsKey,
            counts_workspace: countsWorkspace,
            day_index: holdDay,
            expires_at_ms: expiresAtMs,
            member_id: memberId,
          })
          .returning("id"),
      )
      .selectFrom(holds.as("h"))
      .leftJoin("usage_counters as u", (join) =>
        join.on((eb) =>
          shape === "none"
            ? sql<boolean>`false` // the holds' row alone
            : currentWindowsMatch(eb, "u", ledgerKey, ledgerWorkspace, indexes),
        ),
      )
      .select([
        "h.held_ws_day",
        "h.held_ws_week",
        "h.held_ws_month",
        "h.held_ws_all",
        "h.held_key",
        "u.scope",
        "u.window",
        "u.usage_nano",
        "u.byok_nano",
      ])
      .compile();
  },
);

/** The statement readHoldsAndUsage runs, compiled with its values (also for its query-plan test). */
export function holdsAndUsageQuery(
  db: Db,
  req: HoldRequest,
  nowMs: number,
  expiresAtMs: number,
  amountNano: bigint,
) {
  const readKey = req.countsKey && req.key.limitNano !== null;
  const readWorkspace = req.countsWorkspace && req.workspace.budgets.length > 0;
  const shape = readKey ? (readWorkspace ? "both" : "key") : readWorkspace ? "workspace" : "none";
  const { day, week, month, all } = currentWindowIndexes(req.now);
  const [keyFirstDay, keyLastDay] = windowDays(keyWindow(req.key), req.now);
  const [weekFirstDay, weekLastDay] = windowDays("week", req.now);
  const [monthFirstDay, monthLastDay] = windowDays("month", req.now);
  return holdsAndUsage.bind(
    db,
    shape,
    req.id,
    req.organizationId,
    req.workspace.id,
    req.key.hash,
    amountNano,
    req.countsKey ? 1 : 0,
    req.countsWorkspace ? 1 : 0,
    expiresAtMs,
    nowMs,
    day,
    week,
    month,
    all,
    dayIndex(req.now),
    keyFirstDay,
    keyLastDay,
    weekFirstDay,
    weekLastDay,
    monthFirstDay,
    monthLastDay,
    req.key.creatorUserId,
  );
}

export async function readHoldsAndUsage(
  trx: Db,
  req: HoldRequest,
  nowMs: number,
  expiresAtMs: number,
  amountNano: bigint,
): Promise<KeyAndWorkspaceTotals & { held: Held }> {
  const { rows } = await trx.executeQuery(holdsAndUsageQuery(trx, req, nowMs, expiresAtMs, amountNano));
  const first = rows[0];
  const counters = rows.filter((r): r is typeof r & UsageRow => r.scope !== null);
  return {
    ...totalsOf(counters),
    held: {
      key: toBigInt(first?.held_key ?? 0),
      workspace: {
        day: toBigInt(first?.held_ws_day ?? 0),
        week: toBigInt(first?.held_ws_week ?? 0),
        month: toBigInt(first?.held_ws_month ?? 0),
        all: toBigInt(first?.held_ws_all ?? 0),
      },
    },
  };
}

/**
 * For guardrail budgets (docs/guardrails.md "Budgets"): the open holds of the request's key and of
 * every key its creator made (the member's: across workspaces, which the caller serialises with
 * a lock of its own), in each window containing the request's day, the request's own hold left
 * out. Every hold counts, whether or not it counts toward the key's limit.
 */
export async function readGuardrailHolds(
  trx: Db,
  req: HoldRequest,
  nowMs: number,
  member: boolean,
): Promise<NonNullable<Held["guardrail"]>> {
  const [wf, wl] = windowDays("week", req.now);
  const [mf, ml] = windowDays("month", req.now);
  const d = dayIndex(req.now);
  const within = (first: number, last: number) =>
    sql`(day_index is null or day_index between ${first} and ${last})`;
  const sums = (who: ReturnType<typeof sql>) => [
    sql<string>`coalesce(sum(case when ${who} and ${within(d, d)} then amount_nano else 0 end), 0)`,
    sql<string>`coalesce(sum(case when ${who} and ${within(wf, wl)} then amount_nano else 0 end), 0)`,
    sql<string>`coalesce(sum(case when ${who} and ${within(mf, ml)} then amount_nano else 0 end), 0)`,
    sql<string>`coalesce(sum(case when ${who} then amount_nano else 0 end), 0)`,
  ];
  const creator = member ? req.key.creatorUserId : null;
  const byKey = sql`key_hash = ${req.key.hash}`;
  const byMember = creator === null ? sql`false` : sql`member_id = ${creator}`;
  const [k0, k1, k2, k3] = sums(byKey);
  const [m0, m1, m2, m3] = sums(byMember);
  const row = await trx
    .selectFrom("gateway_reservations")
    .select([
      k0!.as("k_day"),
      k1!.as("k_week"),
      k2!.as("k_month"),
      k3!.as("k_all"),
      m0!.as("m_day"),
      m1!.as("m_week"),
      m2!.as("m_month"),
      m3!.as("m_all"),
    ])
    .where("organization_id", "=", req.organizationId)
    .where("expires_at_ms", ">", nowMs)
    .where("id", "<>", req.id)
    .where((eb) =>
      creator === null
        ? eb("key_hash", "=", req.key.hash)
        : eb.or([eb("key_hash", "=", req.key.hash), eb("member_id", "=", creator)]),
    )
    .executeTakeFirst();
  const n = (v: unknown) => toBigInt((v ?? 0) as string);
  return {
    key: { day: n(row?.k_day), week: n(row?.k_week), month: n(row?.k_month), all: n(row?.k_all) },
    member: { day: n(row?.m_day), week: n(row?.m_week), month: n(row?.m_month), all: n(row?.m_all) },
  };
}
