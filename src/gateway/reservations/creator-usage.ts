import { creatorUsageRows } from "../../domain/keys/key-repo.js";
import { currentWindowIndexes, zeroTotals, type WindowTotals } from "../../domain/usage/ledger.js";
import type { WindowKind } from "../../domain/usage/windows.js";
import { toBigInt } from "../../lib/money.js";
import type { Db } from "../../stores/record-store.js";

/**
 * A member's current-window totals: the counters of every key the member created (deleted ones
 * too), summed. What a member guardrail's budget has spent.
 */
export async function readCreatorUsage(
  db: Db,
  organizationId: string,
  userId: string,
  now: Date,
): Promise<WindowTotals> {
  const rows = await creatorUsageRows(db, organizationId, userId, currentWindowIndexes(now));
  const out = zeroTotals();
  for (const r of rows) {
    const t = out[r.window as WindowKind];
    t.usage += toBigInt(r.usage_nano as bigint);
    t.byok += toBigInt(r.byok_nano as bigint);
  }
  return out;
}
