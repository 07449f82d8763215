import { Type, type Static } from "typebox";
import { nanoToUsd } from "../../lib/money.js";
import type { Db } from "../../stores/record-store.js";
import { lifetimeLimitsOfOrganization } from "../keys/key-repo.js";
import { readOrganizationUsage } from "../usage/ledger.js";
import { workspacesOfOrganization } from "../workspaces/workspace-repo.js";
import { organizationCreditLine } from "./organization-repo.js";

/** The wire form of `GET /credits`'s `data` (docs/wire-compatibility.md "Credits"). */
export const CreditsSchema = Type.Object({
  total_credits: Type.Number({
    description:
      "USD: the organization's credit line, or when none is set the sum of its live keys' lifetime limits",
  }),
  total_usage: Type.Number({
    description: "USD: the organization's lifetime usage (credits; BYOK excluded)",
  }),
});
export type Credits = Static<typeof CreditsSchema>;

/**
 * total_credits in nano-USD: the credit line when one is set; otherwise the sum of the lifetime
 * limits (docs/api-notes.md "Credits" says why keys without a limit or with a resetting one add
 * nothing).
 */
export function totalCreditsNano(creditLine: bigint | null, lifetimeLimits: readonly bigint[]): bigint {
  if (creditLine !== null) return creditLine;
  return lifetimeLimits.reduce((sum, l) => sum + l, 0n);
}

/**
 * The organization's credits: what it may spend and what it has spent, from the same usage ledger
 * as every key's `usage`. A figure to report: the gateway enforces key limits and workspace
 * budgets, not the credit line.
 */
export async function organizationCredits(db: Db, organizationId: string): Promise<Credits> {
  const [line, limits, usage] = await Promise.all([
    organizationCreditLine(db, organizationId),
    lifetimeLimitsOfOrganization(db, organizationId),
    workspacesOfOrganization(db, organizationId).then((ws) =>
      // Deleted workspaces too: what was spent in them stays spent.
      readOrganizationUsage(
        db,
        organizationId,
        ws.map((w) => w.id),
      ),
    ),
  ]);
  return {
    total_credits: nanoToUsd(totalCreditsNano(line ?? null, limits)),
    total_usage: nanoToUsd(usage.usage),
  };
}
