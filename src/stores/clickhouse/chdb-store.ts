import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session, drainPending } from "chdb";
import { ActivityTimeoutError, type ActivityStore } from "../activity-store.js";
import { openClickHouseStore, type ClickHouseEngine } from "./clickhouse-store.js";
import { CH_TIMEOUT_CODE, RESULT_SETTINGS, parseJsonResult } from "./clickhouse-values.js";

/** Extra time the JavaScript side waits past max_execution_time before giving up on the engine. */
const BACKSTOP_MS = 2_000;

/** `SETTINGS a = 1, b = 'x'` (values are numbers or fixed identifiers from this module). */
export function settingsClause(settings: Record<string, string | number>): string {
  return `SETTINGS ${Object.entries(settings)
    .map(([k, v]) => `${k} = ${typeof v === "number" ? String(v) : `'${v.replace(/[\\']/g, "\\$&")}'`}`)
    .join(", ")}`;
}

const isTimeout = (err: unknown): boolean => {
  const e = err as { clickhouseCode?: unknown; name?: unknown } | null;
  return e?.clickhouseCode === CH_TIMEOUT_CODE || e?.name === "ChdbTimeoutError";
};

/**
 * ClickHouse's engine in-process (chDB), for tests of the ClickHouse dialect where no server runs.
 * libchdb binds one data directory per process, so one such store is open at a time per process;
 * each store gets its own temporary directory, removed at close.
 *
 * Cancellation: every query runs with max_execution_time, which the engine enforces itself (it
 * stops the query and answers TIMEOUT_EXCEEDED). chDB cannot interrupt a running single-shot call
 * from outside: the JavaScript backstop (timeout + 2 s) only rejects early while the engine
 * finishes in the background, which close() waits for (drainPending).
 */
export async function openChdbActivityStore(opts: { path?: string } = {}): Promise<ActivityStore> {
  const ownDir = opts.path === undefined;
  const dir = opts.path ?? mkdtempSync(join(tmpdir(), "gatehouse-chdb-"));
  const session = new Session(dir);
  const engine: ClickHouseEngine = {
    command: async (sql) => {
      await session.queryAsync(sql);
    },
    insertJsonEachRow: async (table, rows) => {
      const payload = Buffer.from(rows.map((r) => JSON.stringify(r)).join("\n"), "utf8");
      await session.insert({ table, values: payload, format: "JSONEachRow" });
    },
    select: async (sql, params, timeoutMs) => {
      const settings = { ...RESULT_SETTINGS, max_execution_time: Math.max(timeoutMs, 1) / 1000 };
      try {
        const res = await session.queryBindAsync(
          `${sql.trim().replace(/;$/, "")}\n${settingsClause(settings)}`,
          params,
          {
            format: "JSON",
            timeout: timeoutMs + BACKSTOP_MS,
          },
        );
        return parseJsonResult(res.text());
      } catch (err) {
        if (isTimeout(err)) throw new ActivityTimeoutError();
        throw err;
      }
    },
    ping: async () => {
      if (!session.open) throw new Error("chdb session is closed");
      await session.queryAsync("SELECT 1");
    },
    close: async () => {
      session.close();
      await drainPending();
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    return await openClickHouseStore(engine);
  } catch (err) {
    await engine.close();
    throw err;
  }
}
