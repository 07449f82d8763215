import type { Command } from "commander";
import {
  reconcileLedger,
  windowLabel,
  type Drift,
  type ReconcileReport,
} from "../../domain/reconcile/reconcile.js";
import { systemClock } from "../../lib/clock.js";
import { nanoToUsd } from "../../lib/money.js";
import type { CliIo } from "../cli-io.js";
import { parseIntOption, resolveOrganization, withStores } from "../with-stores.js";

/** The ledger and the activity store disagree: exit code 1 after the report. */
export class DriftFound extends Error {
  override readonly name = "DriftFound";
}

interface ReconcileOpts {
  org?: string;
  current?: boolean;
  recheckMs: string;
  json?: boolean;
}

const money = (nano: bigint) => {
  const neg = nano < 0n;
  const abs = neg ? -nano : nano;
  return `${neg ? "-" : ""}${abs / 1_000_000_000n}.${(abs % 1_000_000_000n).toString().padStart(9, "0")}`;
};

const sameDrift = (a: Drift, b: Drift) =>
  a.scope === b.scope && a.scopeId === b.scopeId && a.window === b.window && a.windowIndex === b.windowIndex;

/**
 * `gatehouse reconcile`: recomputes the usage ledger (per key and workspace, every day, week, month
 * and all time; credits and BYOK) from the activity store and compares it with the counters in the
 * record store. Prints the drifts; exit code 1 when there is any, 0 when none.
 */
export function registerReconcile(program: Command, io: CliIo): void {
  program
    .command("reconcile")
    .description("compare the usage ledger with the activity store (exit 1 on any drift)")
    .option("--org <id>", "organization to check (default: the first organization)")
    .option("--current", "only the windows containing now (day, week, month) and all time")
    .option(
      "--recheck-ms <ms>",
      "on a drift, check again after this pause (in-flight ingest is not a drift)",
      "2000",
    )
    .option("--json", "print the report as one JSON object")
    .action(async (opts: ReconcileOpts) => {
      const recheckMs = parseIntOption("--recheck-ms", opts.recheckMs, 0, 600_000);
      await withStores(
        io,
        "Stop the server to reconcile an embedded DuckDB store (or use ClickHouse, CLICKHOUSE_URL, which many processes can share).",
        async ({ config, store, activity }) => {
          const org = await resolveOrganization(store, opts.org);
          const run = () =>
            reconcileLedger({ store, activity, clock: systemClock }, org.id, {
              windows: opts.current ? "current" : "all",
              timeoutMs: Math.max(config.analytics.queryTimeoutMs, 60_000),
            });
          let report = await run();
          if (!report.inSync && recheckMs > 0) {
            // A batch committing between the two reads shows as a drift once; a real one stays.
            await new Promise((done) => setTimeout(done, recheckMs));
            const again = await run();
            const drifts = again.drifts.filter((d) => report.drifts.some((p) => sameDrift(p, d)));
            const recordsDiffer =
              again.records.ledger !== again.records.activity &&
              report.records.ledger !== report.records.activity;
            report = { ...again, drifts, inSync: drifts.length === 0 && !recordsDiffer };
          }
          print(io, org, report, Boolean(opts.json));
          if (!report.inSync) {
            const n = report.drifts.length;
            throw new DriftFound(
              n > 0
                ? `${n === 1 ? "1 ledger counter differs" : `${n} ledger counters differ`} from the activity store`
                : `the record store accepted ${report.records.ledger} generations, the activity store holds ${report.records.activity}`,
            );
          }
        },
      );
    });
}

function print(io: CliIo, org: { id: string; name: string }, r: ReconcileReport, json: boolean): void {
  if (json) {
    io.out(
      JSON.stringify({
        organization_id: r.organizationId,
        checked_at: r.checkedAt.toISOString(),
        compared: r.compared,
        in_sync: r.inSync,
        records: r.records,
        drifts: r.drifts.map((d) => ({
          scope: d.scope,
          id: d.scopeId,
          name: d.name,
          window: d.window,
          window_index: d.windowIndex,
          window_label: windowLabel(d.window, d.windowIndex),
          current: d.current,
          ledger: { usage: nanoToUsd(d.ledger.usage), byok_usage: nanoToUsd(d.ledger.byok) },
          activity: { usage: nanoToUsd(d.activity.usage), byok_usage: nanoToUsd(d.activity.byok) },
          difference: {
            usage: nanoToUsd(d.ledger.usage - d.activity.usage),
            byok_usage: nanoToUsd(d.ledger.byok - d.activity.byok),
          },
        })),
      }) + "\n",
    );
    return;
  }
  const lines = [
    `Reconciled organization ${org.name} (${org.id}) at ${r.checkedAt.toISOString()}`,
    `  counters compared:  ${r.compared.toLocaleString("en-US")}`,
    `  generations:        ${r.records.ledger.toLocaleString("en-US")} accepted (record store), ${r.records.activity.toLocaleString("en-US")} in the activity store`,
  ];
  if (r.drifts.length === 0) {
    lines.push(
      r.inSync
        ? "  No drift: the ledger matches the activity store."
        : "  The counters match, but the activity store does not hold every accepted generation.",
    );
    io.out(lines.join("\n") + "\n");
    return;
  }
  lines.push(`  drifts:             ${r.drifts.length}`, "");
  const header = [
    "SCOPE",
    "NAME",
    "ID",
    "WINDOW",
    "LEDGER USAGE",
    "ACTIVITY USAGE",
    "LEDGER BYOK",
    "ACTIVITY BYOK",
  ];
  const rows = r.drifts.map((d) => [
    d.scope,
    d.name ?? "(unknown)",
    d.scope === "key" ? `${d.scopeId.slice(0, 12)}…` : d.scopeId,
    `${windowLabel(d.window, d.windowIndex)}${d.current ? " *" : ""}`,
    money(d.ledger.usage),
    money(d.activity.usage),
    money(d.ledger.byok),
    money(d.activity.byok),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const numeric = (i: number) => i >= 4;
  const fmtRow = (row: string[]) =>
    row
      .map((v, i) => (numeric(i) ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  lines.push(
    fmtRow(header),
    ...rows.map(fmtRow),
    "",
    "* the current window (what key usage fields and budgets show now)",
  );
  io.out(lines.join("\n") + "\n");
}
