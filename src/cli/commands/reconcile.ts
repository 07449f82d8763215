import type { Command } from "commander";
import {
  reconcileLedger,
  windowLabel,
  type Drift,
  type ReconcileReport,
} from "../../analytics/reconcile/reconcile.js";
import { systemClock } from "../../lib/clock.js";
import { nanoToUsd } from "../../lib/money.js";
import type { CliIo } from "../cli-io.js";
import { UsageError } from "../usage-error.js";
import { parseIntOption, resolveOrganization, withStores } from "../with-all-stores.js";
import { listOrganizations } from "../../domain/organizations/organization-repo.js";

/** The ledger and the activity store disagree: exit code 1 after the report. */
export class DriftFound extends Error {
  override readonly name = "DriftFound";
}

interface ReconcileOpts {
  org?: string;
  all?: boolean;
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

/** Why a report is not in sync, in one line (the exit message). */
function driftMessage(r: ReconcileReport): string {
  const n = r.drifts.length;
  if (n > 0)
    return `${n === 1 ? "1 ledger counter differs" : `${n} ledger counters differ`} from the activity store`;
  if (r.records.ledger !== r.records.activity) {
    return `the record store accepted ${r.records.ledger} generations, the activity store holds ${r.records.activity}${pendingNote(r)}`;
  }
  return `the record store holds ${r.feedback.stored} feedback submissions, the activity store ${r.feedback.activity}${queuedNote(r)}`;
}

/** ` (N parked for the activity store)`, when any generations are. */
const pendingNote = (r: ReconcileReport): string =>
  r.records.pending > 0
    ? ` (${r.records.pending.toLocaleString("en-US")} parked for the activity store while it was down)`
    : "";

/** ` (N queued for the activity store)`, when any are. */
const queuedNote = (r: ReconcileReport): string =>
  r.feedback.queued > 0
    ? ` (${r.feedback.queued.toLocaleString("en-US")} queued for the activity store)`
    : "";

/**
 * `gatehouse reconcile`: recomputes the usage ledger (per key and workspace, every day, week, month
 * and all time; credits and BYOK) from the activity store and compares it with the counters in the
 * record store, for one organization or, with --all, for each in turn. Prints the drifts; exit code
 * 1 when there is any, 0 when none.
 */
export function registerReconcile(program: Command, io: CliIo): void {
  program
    .command("reconcile")
    .description("compare the usage ledger with the activity store (exit 1 on any drift)")
    .option("--org <id>", "organization to check (default: the first organization)")
    .option("--all", "check every organization, one after the other (exit 1 if any drifts)")
    .option("--current", "only the windows containing now (day, week, month) and all time")
    .option(
      "--recheck-ms <ms>",
      "on a drift, check again after this pause (in-flight ingest is not a drift)",
      "2000",
    )
    .option("--json", "print the report as one JSON object")
    .action(async (opts: ReconcileOpts) => {
      const recheckMs = parseIntOption("--recheck-ms", opts.recheckMs, 0, 600_000);
      if (opts.all && opts.org !== undefined) throw new UsageError("--all: not with --org");
      const json = Boolean(opts.json);
      await withStores(
        io,
        "Stop the server to reconcile an embedded DuckDB store (or use ClickHouse, CLICKHOUSE_URL, which many processes can share).",
        async ({ config, store, activity }) => {
          const check = async (orgId: string): Promise<ReconcileReport> => {
            const run = () =>
              reconcileLedger({ store, activity, clock: systemClock }, orgId, {
                windows: opts.current ? "current" : "all",
                timeoutMs: Math.max(config.analytics.queryTimeoutMs, 60_000),
              });
            const report = await run();
            if (report.inSync || recheckMs === 0) return report;
            // A batch committing between the two reads shows as a drift once; a real one stays.
            await new Promise((done) => setTimeout(done, recheckMs));
            const again = await run();
            const drifts = again.drifts.filter((d) => report.drifts.some((p) => sameDrift(p, d)));
            const recordsDiffer =
              again.records.ledger !== again.records.activity &&
              report.records.ledger !== report.records.activity;
            const feedbackDiffers =
              again.feedback.stored !== again.feedback.activity &&
              report.feedback.stored !== report.feedback.activity;
            return { ...again, drifts, inSync: drifts.length === 0 && !recordsDiffer && !feedbackDiffers };
          };

          if (!opts.all) {
            const org = await resolveOrganization(store, opts.org);
            const report = await check(org.id);
            if (json) io.out(JSON.stringify(reportJson(report)) + "\n");
            else print(io, org, report);
            if (!report.inSync) throw new DriftFound(driftMessage(report));
            return;
          }

          const orgs = await listOrganizations(store.db);
          const reports: ReconcileReport[] = [];
          const drifting: string[] = [];
          for (const org of orgs) {
            const report = await check(org.id);
            reports.push(report);
            if (!report.inSync) drifting.push(`${org.name} (${org.id}): ${driftMessage(report)}`);
            if (!json) {
              if (reports.length > 1) io.out("\n");
              print(io, org, report);
            }
          }
          if (json) {
            io.out(
              JSON.stringify({ in_sync: drifting.length === 0, organizations: reports.map(reportJson) }) +
                "\n",
            );
          } else {
            const n = orgs.length;
            io.out(
              n === 0
                ? "No organizations yet: nothing to reconcile.\n"
                : `\n${n === 1 ? "1 organization" : `${n} organizations`}: ${drifting.length === 0 ? "no drift" : `${drifting.length} with drift`}.\n`,
            );
          }
          if (drifting.length > 0) {
            throw new DriftFound(
              `drift in ${drifting.length} of ${orgs.length} organizations: ${drifting.join("; ")}`,
            );
          }
        },
      );
    });
}

/** The --json form of one organization's report. */
function reportJson(r: ReconcileReport): Record<string, unknown> {
  return {
    organization_id: r.organizationId,
    checked_at: r.checkedAt.toISOString(),
    compared: r.compared,
    in_sync: r.inSync,
    records: r.records,
    feedback: r.feedback,
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
  };
}

function print(io: CliIo, org: { id: string; name: string }, r: ReconcileReport): void {
  const lines = [
    `Reconciled organization ${org.name} (${org.id}) at ${r.checkedAt.toISOString()}`,
    `  counters compared:  ${r.compared.toLocaleString("en-US")}`,
    `  generations:        ${r.records.ledger.toLocaleString("en-US")} accepted (record store), ${r.records.activity.toLocaleString("en-US")} in the activity store${pendingNote(r)}`,
    `  feedback:           ${r.feedback.stored.toLocaleString("en-US")} stored (record store), ${r.feedback.activity.toLocaleString("en-US")} in the activity store${queuedNote(r)}`,
  ];
  if (r.drifts.length === 0) {
    lines.push(
      r.inSync
        ? "  No drift: the ledger matches the activity store."
        : r.records.ledger !== r.records.activity
          ? "  The counters match, but the activity store does not hold every accepted generation."
          : "  The counters match, but the activity store does not hold every feedback submission.",
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
