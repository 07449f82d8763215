import { Type, type Static } from "typebox";
import { nanoToUsd, toBigInt } from "../../lib/money.js";
import { Nullable } from "../../lib/typebox.js";
import type { Db } from "../../stores/record-store.js";
import { readUsage, zeroTotals, type WindowTotals } from "../usage/ledger.js";
import { RESET_WINDOW, type ResetPeriod } from "../usage/windows.js";
import type { KeyRow } from "./key-repo.js";

/** A limit's reset period on the wire (requests and records). */
export const LimitResetSchema = Type.Enum(["daily", "weekly", "monthly"]);

/** Usage numbers shared by KeyRecord and CurrentKey (USD, current windows). */
export const KeyUsageSchema = Type.Object({
  limit: Nullable(Type.Number()),
  limit_remaining: Nullable(Type.Number()),
  limit_reset: Nullable(LimitResetSchema),
  include_byok_in_limit: Type.Boolean(),
  usage: Type.Number(),
  usage_daily: Type.Number(),
  usage_weekly: Type.Number(),
  usage_monthly: Type.Number(),
  byok_usage: Type.Number(),
  byok_usage_daily: Type.Number(),
  byok_usage_weekly: Type.Number(),
  byok_usage_monthly: Type.Number(),
});
export type KeyUsageFields = Static<typeof KeyUsageSchema>;

/** The wire form of an API key (docs/wire-compatibility.md "Keys record"). */
export const KeyRecordSchema = Type.Object({
  hash: Type.String({ description: "SHA-256 of the key string, 64 lowercase hex digits" }),
  name: Type.String(),
  label: Type.String(),
  disabled: Type.Boolean(),
  ...KeyUsageSchema.properties,
  created_at: Type.String(),
  updated_at: Type.String(),
  creator_user_id: Nullable(Type.String()),
  external_user: Nullable(Type.String()),
  workspace_id: Type.String(),
  expires_at: Nullable(Type.String({ format: "date-time" })),
});
export type KeyRecord = Static<typeof KeyRecordSchema>;

const isResetPeriod = (v: string | null): v is ResetPeriod => v !== null && v in RESET_WINDOW;

/**
 * Remaining spend under a key's limit, in nano-USD: null without a limit, otherwise
 * max(0, limit - U) where U is the usage of the limit's window (all-time without a reset period),
 * plus the same window's BYOK usage when BYOK counts toward the limit.
 */
export function limitRemainingNano(
  limitNano: bigint | null,
  reset: ResetPeriod | null,
  includeByok: boolean,
  totals: WindowTotals,
): bigint | null {
  if (limitNano === null) return null;
  const w = totals[reset === null ? "all" : RESET_WINDOW[reset]];
  const used = w.usage + (includeByok ? w.byok : 0n);
  const left = limitNano - used;
  return left > 0n ? left : 0n;
}

/** Limit and usage fields of a key row, converted to USD at this edge. */
export function keyUsageFields(row: KeyRow, totals: WindowTotals): KeyUsageFields {
  return usageFields(
    row.limit_nano === null ? null : toBigInt(row.limit_nano),
    isResetPeriod(row.limit_reset) ? row.limit_reset : null,
    Number(row.include_byok_in_limit) === 1,
    totals,
  );
}

/** Limit and usage fields from a key's limit settings (nano-USD) and usage, in USD. */
export function usageFields(
  limitNano: bigint | null,
  reset: ResetPeriod | null,
  includeByok: boolean,
  totals: WindowTotals,
): KeyUsageFields {
  const remaining = limitRemainingNano(limitNano, reset, includeByok, totals);
  return {
    limit: limitNano === null ? null : nanoToUsd(limitNano),
    limit_remaining: remaining === null ? null : nanoToUsd(remaining),
    limit_reset: reset,
    include_byok_in_limit: includeByok,
    usage: nanoToUsd(totals.all.usage),
    usage_daily: nanoToUsd(totals.day.usage),
    usage_weekly: nanoToUsd(totals.week.usage),
    usage_monthly: nanoToUsd(totals.month.usage),
    byok_usage: nanoToUsd(totals.all.byok),
    byok_usage_daily: nanoToUsd(totals.day.byok),
    byok_usage_weekly: nanoToUsd(totals.week.byok),
    byok_usage_monthly: nanoToUsd(totals.month.byok),
  };
}

/** One key row and its current usage as a KeyRecord. */
export function toKeyRecord(row: KeyRow, totals: WindowTotals): KeyRecord {
  return {
    hash: row.hash,
    name: row.name,
    label: row.label,
    disabled: Number(row.disabled) === 1,
    ...keyUsageFields(row, totals),
    created_at: row.created_at,
    updated_at: row.updated_at,
    creator_user_id: row.creator_user_id,
    external_user: row.external_user,
    workspace_id: row.workspace_id,
    expires_at: row.expires_at,
  };
}

/** KeyRecords for a page of rows, with the usage of all of them read in one query. */
export async function toKeyRecords(db: Db, rows: readonly KeyRow[], now: Date): Promise<KeyRecord[]> {
  const usage = await readUsage(
    db,
    "key",
    rows.map((r) => r.hash),
    now,
  );
  return rows.map((r) => toKeyRecord(r, usage.get(r.hash) ?? zeroTotals()));
}

/** Usage totals of one key (one query). */
export async function keyTotals(db: Db, hash: string, now: Date): Promise<WindowTotals> {
  return (await readUsage(db, "key", [hash], now)).get(hash) ?? zeroTotals();
}
