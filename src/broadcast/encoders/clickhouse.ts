import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { basicAuth, field, headersFor, trimBase } from "./config-access.js";
import type { BroadcastGeneration, DestinationEncoder, EncodedRequest } from "./encoder.js";
import { sha256Hex } from "./ids.js";
import { WAREHOUSE_COLUMNS, warehouseRows, type WarehouseRow } from "./warehouse-rows.js";

/**
 * ClickHouse over its HTTP interface: every batch is two requests, an idempotent
 * `CREATE TABLE IF NOT EXISTS` and `INSERT INTO db.table FORMAT JSONEachRow` with the rows as the
 * body. The insert carries `insert_deduplication_token` (a hash of the generation ids), and the
 * table enables deduplication for non-replicated MergeTree, so a retried batch is stored once.
 */
const quoteIdent = (name: string): string => `\`${name.replace(/\\/g, "\\\\").replace(/`/g, "\\`")}\``;

const COLUMN_TYPES: Record<(typeof WAREHOUSE_COLUMNS)[number], string> = {
  TIMESTAMP: "DateTime64(3, 'UTC')",
  TRACE_ID: "String",
  SPAN_ID: "String",
  PARENT_SPAN_ID: "Nullable(String)",
  GENERATION_ID: "String",
  NAME: "String",
  SPAN_TYPE: "LowCardinality(String)",
  STATUS: "LowCardinality(String)",
  LEVEL: "LowCardinality(String)",
  USER_ID: "Nullable(String)",
  SESSION_ID: "Nullable(String)",
  MODEL: "LowCardinality(String)",
  PROVIDER_NAME: "LowCardinality(String)",
  API_KEY_NAME: "Nullable(String)",
  FINISH_REASON: "Nullable(String)",
  PROMPT_TOKENS: "UInt64",
  COMPLETION_TOKENS: "UInt64",
  TOTAL_TOKENS: "UInt64",
  TOTAL_COST: "Nullable(Float64)",
  DURATION_MS: "Float64",
  ATTRIBUTES: "String",
  INPUT: "Nullable(String)",
  OUTPUT: "Nullable(String)",
  METADATA: "String",
  MODEL_PARAMETERS: "Nullable(String)",
};

export const clickhouseTableName = (config: DestinationConfig): string =>
  `${quoteIdent(field("clickhouse", config, "database"))}.${quoteIdent(field("clickhouse", config, "table"))}`;

export function clickhouseCreateTable(config: DestinationConfig): string {
  const columns = WAREHOUSE_COLUMNS.map((c) => `  ${c} ${COLUMN_TYPES[c]}`).join(",\n");
  return (
    `CREATE TABLE IF NOT EXISTS ${clickhouseTableName(config)} (\n${columns}\n)\n` +
    "ENGINE = MergeTree\nPARTITION BY toYYYYMM(TIMESTAMP)\nORDER BY (TIMESTAMP, TRACE_ID, SPAN_ID)\n" +
    "SETTINGS non_replicated_deduplication_window = 10000"
  );
}

/** ClickHouse reads DateTime64 from JSON as "YYYY-MM-DD hh:mm:ss.sss" (UTC per the column). */
const chTimestamp = (ms: number): string => new Date(ms).toISOString().replace("T", " ").replace("Z", "");

function rowJson(row: WarehouseRow): string {
  return JSON.stringify({ ...row, TIMESTAMP: chTimestamp(row.TIMESTAMP) });
}

const headers = (config: DestinationConfig): Record<string, string> =>
  headersFor(config, {
    authorization: basicAuth(
      field("clickhouse", config, "username"),
      field("clickhouse", config, "password"),
    ),
    "content-type": "text/plain; charset=utf-8",
  });

const url = (config: DestinationConfig, params: Record<string, string>): string =>
  `${trimBase(field("clickhouse", config, "host"))}/?${new URLSearchParams(params).toString()}`;

function createRequest(config: DestinationConfig): EncodedRequest {
  return {
    method: "POST",
    url: url(config, {}),
    headers: headers(config),
    body: clickhouseCreateTable(config),
  };
}

/** The insert's deduplication token: the same batch always gets the same token. */
export const insertToken = (batch: readonly BroadcastGeneration[]): string =>
  sha256Hex(batch.map((g) => g.id).join("\n")).slice(0, 32);

export const clickhouseEncoder: DestinationEncoder<DestinationConfig> = {
  /** Rows per insert; ClickHouse prefers few large inserts, well under its 1 MB-row defaults. */
  maxBatch: 1000,
  encode: (batch, config) => {
    if (batch.length === 0) return [];
    const rows = batch.flatMap(warehouseRows).map(rowJson).join("\n");
    return [
      createRequest(config),
      {
        method: "POST",
        url: url(config, {
          query: `INSERT INTO ${clickhouseTableName(config)} FORMAT JSONEachRow`,
          insert_deduplication_token: insertToken(batch),
          date_time_input_format: "best_effort",
        }),
        headers: headers(config),
        body: `${rows}\n`,
      },
    ];
  },
  /** The test creates the table when missing: it proves the credentials and the CREATE grant. */
  testRequest: createRequest,
};
