import type { Command } from "commander";
import { setOrganizationCreditLine } from "../../domain/organizations/organization-repo.js";
import { MAX_USD, NANOS_PER_USD, nanoToUsd } from "../../lib/money.js";
import type { CliIo } from "../cli-io.js";
import { UsageError } from "../usage-error.js";
import { resolveOrganization } from "../with-all-stores.js";
import { withStore } from "../with-record-store.js";
import { OrganizationNotFound } from "./keys-create-management.js";

/**
 * A credit line as written on the command line, in nano-USD: a plain decimal from 0 to MAX_USD
 * with at most 9 decimals (the ledger's unit), or `none` (null) to clear it.
 */
export function parseCreditLine(raw: string): bigint | null {
  if (raw === "none") return null;
  const m = /^(\d+)(?:\.(\d{1,9}))?$/.exec(raw);
  if (!m)
    throw new UsageError("USD: must be an amount in USD such as 250 or 12.5 (at most 9 decimals), or none");
  // Read digit by digit: a double would not hold every 9-decimal amount up to MAX_USD exactly.
  const nano = BigInt(m[1] as string) * NANOS_PER_USD + BigInt((m[2] ?? "").padEnd(9, "0"));
  if (nano > BigInt(MAX_USD) * NANOS_PER_USD)
    throw new UsageError(`USD: at most ${MAX_USD.toLocaleString("en-US")}`);
  return nano;
}

/**
 * `gatehouse org credit-line USD|none [--org ORG_ID]`: sets the organization's credit line, the
 * `total_credits` of `GET /api/v1/credits` (docs/api-notes.md "Credits"). A Gatehouse setting:
 * reported to clients, not enforced (key limits and workspace budgets are).
 */
export function registerOrgCreditLine(org: Command, io: CliIo): void {
  org
    .command("credit-line")
    .description("set the organization's credit line in USD (GET /api/v1/credits), or none to clear it")
    .argument("<usd>", "amount in USD, or none")
    .option("--org <id>", "organization id (default: the first organization)")
    .option("--json", "print the result as one JSON object")
    .action(async (raw: string, opts: { org?: string; json?: boolean }) => {
      const nano = parseCreditLine(raw.trim());
      const org = await withStore(io, async (store) => {
        const found = await resolveOrganization(store, opts.org);
        if (!(await setOrganizationCreditLine(store.db, found.id, nano))) {
          throw new OrganizationNotFound(`organization ${found.id} not found`);
        }
        return found;
      });
      const creditLine = nano === null ? null : nanoToUsd(nano);
      if (opts.json) {
        io.out(JSON.stringify({ organization_id: org.id, name: org.name, credit_line: creditLine }) + "\n");
        return;
      }
      io.out(
        creditLine === null
          ? `Credit line of "${org.name}" (${org.id}) cleared: total_credits is now the sum of its keys' lifetime limits.\n`
          : `Credit line of "${org.name}" (${org.id}) set to ${creditLine} USD.\n`,
      );
    });
}
