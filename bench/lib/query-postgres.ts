/**
 * The PostgreSQL side of the analytics query benchmark: the same generations as a table of rows,
 * one row per generation, the way several gateways keep spend logs, with the indexes such a
 * gateway has (organization + time, and the key). Loaded with COPY FROM STDIN from a CSV that
 * DuckDB exports from the benchmark's activity file, so both engines hold identical rows.
 */
import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { GENERATION_COLUMNS, type ColumnKind } from "../../src/stores/activity-columns.js";

const PG_TYPE: Record<ColumnKind, string> = {
  string: "text NOT NULL",
  "string?": "text",
  timestamp: "timestamptz NOT NULL",
  int64: "bigint NOT NULL",
  "int64?": "bigint",
  bool: "boolean NOT NULL",
  float64: "double precision NOT NULL",
  "float64?": "double precision",
};

export const PG_TABLE = "spend_logs";

export interface PgBench {
  client: pg.Client;
  /** A second session on the same schema with JIT compilation off (jit = off). */
  noJit: pg.Client;
  schema: string;
  /** Drops the benchmark's schema and disconnects. */
  drop(): Promise<void>;
}

/**
 * Connects (session time zone UTC, so date_trunc('day', ...) cuts UTC days as DuckDB does) and
 * creates a dedicated schema, dropped by `drop()`.
 */
export async function connectPg(url: string): Promise<PgBench> {
  const client = new pg.Client({ connectionString: url, options: "-c TimeZone=UTC" });
  await client.connect();
  const schema = `gh_bench_query_${process.pid}`;
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.query(`SET search_path TO ${schema}`);
  const noJit = new pg.Client({
    connectionString: url,
    options: `-c TimeZone=UTC -c jit=off -c search_path=${schema}`,
  });
  await noJit.connect();
  let dropped = false;
  return {
    client,
    noJit,
    schema,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      try {
        await noJit.end();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

export interface PgLoadTimes {
  copyMs: number;
  indexMs: number;
  vacuumMs: number;
  tableBytes: number;
}

/**
 * Creates the spend-log table, COPYs the CSV in (FREEZE: created in the same transaction), builds
 * the indexes and runs VACUUM ANALYZE. UNLOGGED only spares the load its WAL: the heap, the
 * indexes and therefore every read are those of an ordinary table.
 */
export async function loadPg(db: PgBench, csvPath: string): Promise<PgLoadTimes> {
  const { client } = db;
  const cols = GENERATION_COLUMNS.map((c) => `${c.name} ${PG_TYPE[c.kind]}`).join(",\n  ");
  let t = performance.now();
  await client.query("BEGIN");
  await client.query(`CREATE UNLOGGED TABLE ${PG_TABLE} (\n  ${cols}\n)`);
  await pipeline(
    createReadStream(csvPath, { highWaterMark: 1 << 20 }),
    client.query(
      copyFrom(
        `COPY ${PG_TABLE} (${GENERATION_COLUMNS.map((c) => c.name).join(", ")}) FROM STDIN (FORMAT csv, FREEZE)`,
      ),
    ),
  );
  await client.query("COMMIT");
  const copyMs = performance.now() - t;
  t = performance.now();
  await client.query("SET maintenance_work_mem = '1GB'");
  await client.query(`CREATE INDEX ${PG_TABLE}_org_created ON ${PG_TABLE} (organization_id, created_at)`);
  await client.query(`CREATE INDEX ${PG_TABLE}_api_key ON ${PG_TABLE} (api_key_id)`);
  const indexMs = performance.now() - t;
  t = performance.now();
  await client.query(`VACUUM ANALYZE ${PG_TABLE}`);
  const vacuumMs = performance.now() - t;
  const size = await client.query<{ n: string }>(`SELECT pg_total_relation_size('${PG_TABLE}') AS n`);
  return { copyMs, indexMs, vacuumMs, tableBytes: Number(size.rows[0]?.n ?? 0) };
}

/**
 * The analytics query as a spend-log gateway would write it against its table: the same window,
 * filter, grouping, aggregates, order and limit as the compiled DuckDB query.
 */
export const PG_QUERY = `
SELECT
  model AS d_model,
  (extract(epoch FROM date_trunc('day', created_at)) * 1000)::bigint AS t_bucket,
  count(*) AS m_request_count,
  coalesce(sum(usage_nano + byok_usage_inference_nano), 0) AS m_total_usage,
  avg(latency_ms) AS m_avg_latency
FROM ${PG_TABLE}
WHERE organization_id = $1
  AND created_at >= $2
  AND created_at < $3
  AND api_key_id = $4
GROUP BY d_model, t_bucket
ORDER BY t_bucket DESC NULLS LAST, model COLLATE "C" ASC NULLS LAST
LIMIT $5`;

export interface PgRow {
  d_model: string;
  t_bucket: string;
  m_request_count: string;
  m_total_usage: string;
  m_avg_latency: number;
}

export async function runPgQuery(
  client: pg.Client,
  args: { organizationId: string; startMs: number; endMs: number; apiKeyId: number; limit: number },
): Promise<PgRow[]> {
  const res = await client.query<PgRow>({
    name: "bench_analytics_query",
    text: PG_QUERY,
    values: [
      args.organizationId,
      new Date(args.startMs).toISOString(),
      new Date(args.endMs).toISOString(),
      args.apiKeyId,
      args.limit,
    ],
  });
  return res.rows;
}

/** Settings that shape the plan, printed with the results. */
export async function pgSettings(db: PgBench): Promise<string> {
  const names = ["server_version", "shared_buffers", "work_mem", "max_parallel_workers_per_gather", "jit"];
  const res = await db.client.query<{ name: string; value: string }>(
    "SELECT name, current_setting(name) AS value FROM unnest($1::text[]) AS name",
    [names],
  );
  return res.rows.map((r) => `${r.name}=${r.value}`).join(", ");
}

export async function explainPg(
  db: PgBench,
  args: { organizationId: string; startMs: number; endMs: number; apiKeyId: number; limit: number },
): Promise<string> {
  const res = await db.client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${PG_QUERY}`, [
    args.organizationId,
    new Date(args.startMs).toISOString(),
    new Date(args.endMs).toISOString(),
    args.apiKeyId,
    args.limit,
  ]);
  return res.rows.map((r) => r["QUERY PLAN"]).join("\n");
}
