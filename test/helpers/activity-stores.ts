import { createClient } from "@clickhouse/client";
import { drainPending } from "chdb";
import { createChdbConnection } from "chdb/connection";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ActivityRow, ClassificationRow } from "../../src/activity/activity-row.js";
import { contextLengthBucket, throughputOf } from "../../src/activity/activity-row.js";
import type {
  ActivityStore,
  AnalyticsDialect,
  ExclusiveActivityWriter,
} from "../../src/stores/activity-store.js";
import { encodeActivity } from "../../src/stores/column-texts.js";
import { openChdbActivityStore } from "../../src/stores/clickhouse/chdb-store.js";
import { openClickHouseServerStore } from "../../src/stores/clickhouse/server-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";

export const CLICKHOUSE_URL = process.env.CLICKHOUSE_URL ?? "";
export const CLICKHOUSE_SKIP_REASON =
  "ClickHouse server suites skipped: set CLICKHOUSE_URL=http://user:pass@host:8123 to run them (the ClickHouse dialect still runs in-process through chDB)";
if (!CLICKHOUSE_URL) console.warn(CLICKHOUSE_SKIP_REASON);

export interface ActivityStoreFactory {
  name: string;
  dialect: AnalyticsDialect;
  skip: string | null;
  /** A query that runs for a long time (for cancellation tests). */
  slowSql: string;
  /**
   * Whether a running query leaves other statements free to run. chDB runs one statement at a
   * time per session (per process), so there an insert waits for the running query to end.
   */
  concurrent: boolean;
  open(): Promise<ActivityStore>;
}

const CH_SLOW = "SELECT count() AS n FROM numbers(100000000000) WHERE sipHash64(number) = 0";

/**
 * Every activity engine: DuckDB in memory; the ClickHouse engine in-process (chDB) through the
 * chDB adapter and through the @clickhouse/client adapter (over chDB's connection for the
 * client); a real ClickHouse server when CLICKHOUSE_URL is set. chDB binds one data directory per
 * process: open one chDB-backed store at a time and close it before the next.
 */
export const ACTIVITY_STORE_FACTORIES: ActivityStoreFactory[] = [
  {
    name: "duckdb (memory)",
    dialect: "duckdb",
    skip: null,
    slowSql: "SELECT count(*) AS n FROM range(100000000000) t(x) WHERE hash(x) = 0",
    concurrent: true,
    open: () => openDuckDbActivityStore({ path: ":memory:" }),
  },
  {
    name: "chdb (in-process ClickHouse)",
    dialect: "clickhouse",
    skip: null,
    slowSql: CH_SLOW,
    concurrent: false,
    open: () => openChdbActivityStore(),
  },
  {
    name: "@clickhouse/client over chDB",
    dialect: "clickhouse",
    skip: null,
    slowSql: CH_SLOW,
    concurrent: false,
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), "gatehouse-chconn-"));
      const client = createClient({ connection: createChdbConnection({ path: dir }) } as never);
      const store = await openClickHouseServerStore({ client });
      return {
        ...store,
        close: async () => {
          await store.close();
          await drainPending();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: "clickhouse server",
    dialect: "clickhouse",
    skip: CLICKHOUSE_URL ? null : CLICKHOUSE_SKIP_REASON,
    slowSql: CH_SLOW,
    concurrent: true,
    open: () =>
      openClickHouseServerStore({
        url: CLICKHOUSE_URL,
        database: `gh_test_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`,
      }),
  },
];

let seq = 0;

/** A valid activity row; override what the test is about. */
export function activityRow(over: Partial<ActivityRow> = {}): ActivityRow {
  seq += 1;
  const tokensPrompt = over.tokens_prompt ?? 1200;
  const tokensCompletion = over.tokens_completion ?? 300;
  const generationTime = over.generation_time_ms === undefined ? 1500 : over.generation_time_ms;
  return {
    organization_id: "00000000-0000-4000-8000-000000000001",
    id: `gen-${seq}`,
    created_at_ms: Date.parse("2026-11-18T12:00:00.000Z"),
    api_key_id: 1,
    api_key_hash: "a".repeat(64),
    workspace_id: "00000000-0000-4000-8000-0000000000aa",
    model: "openai/gpt-4o",
    provider: "OpenAI",
    variant: null,
    app_id: null,
    user_id: null,
    external_user: null,
    origin: null,
    country: null,
    finish_reason: "stop",
    api: "chat",
    context_length_bucket: contextLengthBucket(tokensPrompt),
    tokens_prompt: tokensPrompt,
    tokens_completion: tokensCompletion,
    tokens_reasoning: 0,
    tokens_cached: 0,
    is_byok: false,
    streamed: false,
    cancelled: false,
    response_cached: false,
    guardrail_invoked: false,
    usage_nano: 1_000n,
    byok_usage_inference_nano: 0n,
    usage_upstream_nano: 0n,
    usage_cache_nano: 0n,
    usage_data_nano: 0n,
    usage_web_nano: 0n,
    usage_upstream_web_nano: 0n,
    usage_file_nano: 0n,
    usage_upstream_file_nano: 0n,
    usage_web_fetch_nano: 0n,
    usage_upstream_web_fetch_nano: 0n,
    latency_ms: 250,
    generation_time_ms: generationTime,
    throughput: throughputOf(tokensCompletion, generationTime),
    ...over,
  };
}

export function tagOf(row: ActivityRow, over: Partial<ClassificationRow> = {}): ClassificationRow {
  return {
    organization_id: row.organization_id,
    generation_id: row.id,
    workspace_id: row.workspace_id,
    created_at_ms: row.created_at_ms,
    classifier_id: "11111111-1111-4111-8111-111111111111",
    dimension_name: "topic",
    value: "billing",
    ...over,
  };
}

/**
 * Writes rows through a single-writer store's buffered-ingest entry point (what the ingest
 * buffer's flusher calls), recording `seqs` as applied.
 */
export async function applyRows(
  writer: ExclusiveActivityWriter,
  rows: readonly ActivityRow[],
  tags: readonly ClassificationRow[] = [],
  seqs: readonly number[] = [],
): Promise<void> {
  await writer.apply([encodeActivity(rows, tags)], seqs);
}
