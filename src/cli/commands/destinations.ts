import type { Command } from "commander";
import { statusOfRow } from "../../broadcast/operations/delivery-status.js";
import { replayDestination, type ReplayResult } from "../../broadcast/operations/replay.js";
import {
  allLiveDestinations,
  organizationOfDestination,
} from "../../domain/destinations/destination-repo.js";
import { loadConfig } from "../../config/config.js";
import { systemClock } from "../../lib/clock.js";
import { parseTimestamp } from "../../lib/time.js";
import type { CliIo } from "../cli-io.js";
import { notGatehouseAnswer, parseServerUrl, serverKey } from "../server-url.js";
import { UsageError } from "../usage-error.js";
import { withStore } from "../with-record-store.js";
import { withStores } from "../with-all-stores.js";

const TIME_FORMAT = "must be an RFC 3339 timestamp with seconds (2026-11-18T12:00:00Z)";

const age = (ms: number | null): string => {
  if (ms === null) return "-";
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m`;
  return `${(ms / 3_600_000).toFixed(1)}h`;
};

/**
 * `gatehouse destinations status`: the delivery state of every live destination (read from the
 * record store, which the server may be using: SQLite and PostgreSQL both allow it).
 * `gatehouse destinations replay --id --from --to`: re-offers a time range to one destination,
 * through the running server (--url, --key) or on the stores directly (server stopped, or
 * ClickHouse).
 */
export function registerDestinations(program: Command, io: CliIo): void {
  const dest = program
    .command("destinations")
    .description("observability destinations: delivery state and replay");

  dest
    .command("status")
    .description("print the delivery state of every destination")
    .option("--json", "print a JSON array")
    .action(async (opts: { json?: boolean }) => {
      const rows = await withStore(io, async (store) => {
        const list = await allLiveDestinations(store.db);
        const now = Date.now();
        const out = [];
        for (const d of list) {
          const s = await statusOfRow(store.db, d.id, now);
          out.push({
            ...s,
            organization_id: d.organization_id,
            type: d.type,
            name: d.name,
            enabled: Number(d.enabled) === 1,
          });
        }
        return out;
      });
      if (opts.json) {
        io.out(JSON.stringify(rows) + "\n");
        return;
      }
      if (rows.length === 0) {
        io.out("No observability destinations.\n");
        return;
      }
      const line = (...cols: string[]) =>
        cols
          .map((c, i) => c.padEnd([36, 14, 8, 9, 9, 7, 8, 24][i] ?? 0))
          .join("  ")
          .trimEnd() + "\n";
      io.out(
        line("ID", "TYPE", "ENABLED", "PENDING", "DELIVERED", "DEAD", "OLDEST", "LAST SUCCESS", "LAST ERROR"),
      );
      for (const r of rows) {
        io.out(
          line(
            r.destination_id,
            r.type,
            r.enabled ? "yes" : "paused",
            String(r.pending),
            String(r.delivered),
            String(r.dead),
            age(r.oldest_pending_age_ms),
            r.last_success_at ?? "-",
            (r.last_error ?? "-").slice(0, 80),
          ),
        );
      }
    });

  dest
    .command("replay")
    .description("re-offer the generations of a time range to one destination (metadata only)")
    .requiredOption("--id <id>", "destination id")
    .requiredOption("--from <time>", "RFC 3339 with seconds: start of the range (inclusive)")
    .requiredOption("--to <time>", "RFC 3339 with seconds: end of the range (exclusive)")
    .option("--url <url>", "replay through a running server (http://host:port) instead of opening the stores")
    .option("--key <key>", "management key for --url (default: $GATEHOUSE_KEY)")
    .option("--json", "print the result as JSON")
    .action(
      async (opts: { id: string; from: string; to: string; url?: string; key?: string; json?: boolean }) => {
        // The range first, as a usage error: before any store or server is contacted.
        const from = parseTimestamp(opts.from);
        if (!from) throw new UsageError(`--from: ${TIME_FORMAT}`);
        const to = parseTimestamp(opts.to);
        if (!to) throw new UsageError(`--to: ${TIME_FORMAT}`);
        if (to.getTime() <= from.getTime()) throw new UsageError("--to: must be after --from");
        let result: ReplayResult;
        if (opts.url !== undefined) {
          const key = serverKey(opts.key, io.env);
          parseServerUrl(opts.url);
          const base = opts.url.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
          const url = `${base}/api/v1/observability/destinations/${encodeURIComponent(opts.id)}/replay`;
          const res = await fetch(url, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ from: opts.from, to: opts.to }),
          });
          const body = (await res.json().catch(() => null)) as {
            data?: ReplayResult;
            error?: { message?: string };
          } | null;
          if (!body?.data && !body?.error) throw new Error(`replay: ${notGatehouseAnswer(url, res)}`);
          if (res.status !== 202 || !body?.data)
            throw new Error(`replay: ${body?.error?.message ?? `HTTP ${res.status}`}`);
          result = body.data;
        } else {
          if (opts.key !== undefined) throw new UsageError("--key: only with --url");
          const config = loadConfig(io.env);
          result = await withStores(
            io,
            "Replay through the running server instead: gatehouse destinations replay --id ID --from T --to T --url http://HOST:PORT --key KEY",
            async ({ store, activity }) => {
              const organizationId = await organizationOfDestination(store.db, opts.id.toLowerCase());
              if (organizationId === undefined) throw new Error(`replay: no destination ${opts.id}`);
              return replayDestination(
                {
                  store,
                  activity,
                  nowMs: systemClock.now().getTime(),
                  queryTimeoutMs: config.analytics.queryTimeoutMs,
                },
                organizationId,
                opts.id,
                opts.from,
                opts.to,
              );
            },
          );
        }
        if (opts.json) io.out(JSON.stringify(result) + "\n");
        else
          io.out(
            `Re-offered ${result.offered} generation(s) of ${result.from} .. ${result.to} to ${result.destination_id}` +
              `${result.truncated ? " (truncated: narrow the range for the rest)" : ""}; the server delivers them.\n`,
          );
      },
    );
}
