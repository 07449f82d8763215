import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { field, headersFor } from "./config-access.js";
import type { DestinationEncoder, EncodedRequest } from "./encoder.js";
import { uuidFromSeed } from "./ids.js";
import { WAREHOUSE_COLUMNS, warehouseRows, type WarehouseRow } from "./warehouse-rows.js";

/**
 * Snowflake's SQL API (`POST /api/v2/statements`), authenticated with a programmatic access
 * token. Each batch is an idempotent `CREATE TABLE IF NOT EXISTS` and one INSERT ... SELECT ...
 * FROM VALUES with every value bound (never spliced into the SQL). The JSON columns are VARIANT,
 * filled by PARSE_JSON. The insert's `requestId` derives from the batch, and `retry=true` makes
 * Snowflake run a resubmitted request once.
 */
const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

const VARIANT = new Set(["ATTRIBUTES", "INPUT", "OUTPUT", "METADATA", "MODEL_PARAMETERS"]);
const NUMBER = new Set(["PROMPT_TOKENS", "COMPLETION_TOKENS", "TOTAL_TOKENS"]);
const FLOAT = new Set(["TOTAL_COST", "DURATION_MS"]);

const SQL_TYPES = (c: string): string =>
  c === "TIMESTAMP"
    ? "TIMESTAMP_NTZ(3)"
    : VARIANT.has(c)
      ? "VARIANT"
      : NUMBER.has(c)
        ? "NUMBER(38,0)"
        : FLOAT.has(c)
          ? "FLOAT"
          : "VARCHAR";

export const snowflakeTableName = (c: DestinationConfig): string =>
  [field("snowflake", c, "database"), field("snowflake", c, "schema"), field("snowflake", c, "table")]
    .map(quoteIdent)
    .join(".");

export const snowflakeCreateTable = (c: DestinationConfig): string =>
  `CREATE TABLE IF NOT EXISTS ${snowflakeTableName(c)} (${WAREHOUSE_COLUMNS.map((col) => `${col} ${SQL_TYPES(col)}`).join(", ")})`;

/**
 * The SELECT list over VALUES' columnN. Every value is bound as TEXT ("" for null, so no binding
 * depends on null handling) and converted here into its column's type.
 */
const selectList = WAREHOUSE_COLUMNS.map((col, i) => {
  const ref = `NULLIF(column${i + 1}, '')`;
  if (col === "TIMESTAMP") return `TO_TIMESTAMP_NTZ(${ref}::NUMBER(38,0), 3)`;
  if (VARIANT.has(col)) return `PARSE_JSON(${ref})`;
  if (NUMBER.has(col)) return `${ref}::NUMBER(38,0)`;
  if (FLOAT.has(col)) return `${ref}::FLOAT`;
  return ref;
}).join(", ");

interface Binding {
  type: "TEXT";
  value: string;
}

const bind = (col: (typeof WAREHOUSE_COLUMNS)[number], row: WarehouseRow): Binding => {
  const value = row[col];
  return { type: "TEXT", value: value === null ? "" : String(value) };
};

/** `requestId` null: Snowflake assigns one (connection tests must run every time). */
function statementRequest(
  c: DestinationConfig,
  body: Record<string, unknown>,
  requestId: string | null,
): EncodedRequest {
  const account = field("snowflake", c, "account").toLowerCase();
  const query = requestId === null ? "" : `?requestId=${requestId}&retry=true`;
  return {
    method: "POST",
    url: `https://${account}.snowflakecomputing.com/api/v2/statements${query}`,
    headers: headersFor(c, {
      authorization: `Bearer ${field("snowflake", c, "token")}`,
      "x-snowflake-authorization-token-type": "PROGRAMMATIC_ACCESS_TOKEN",
      "content-type": "application/json",
      accept: "application/json",
    }),
    body: JSON.stringify({
      timeout: 60,
      database: field("snowflake", c, "database"),
      schema: field("snowflake", c, "schema"),
      warehouse: field("snowflake", c, "warehouse"),
      ...body,
    }),
  };
}

const createRequest = (c: DestinationConfig, seed: string | null): EncodedRequest =>
  statementRequest(
    c,
    { statement: snowflakeCreateTable(c) },
    seed === null ? null : uuidFromSeed(`snowflake-create:${seed}`),
  );

export const snowflakeEncoder: DestinationEncoder<DestinationConfig> = {
  /** Observations per INSERT: 50 generations stay far below the SQL API's bind limits. */
  maxBatch: 50,
  encode: (batch, c) => {
    if (batch.length === 0) return [];
    const rows = batch.flatMap(warehouseRows);
    const bindings: Record<string, Binding> = {};
    let n = 0;
    const tuples = rows.map((row) => {
      const marks = WAREHOUSE_COLUMNS.map((col) => {
        bindings[String(++n)] = bind(col, row);
        return "?";
      });
      return `(${marks.join(", ")})`;
    });
    const statement =
      `INSERT INTO ${snowflakeTableName(c)} (${WAREHOUSE_COLUMNS.join(", ")}) ` +
      `SELECT ${selectList} FROM VALUES ${tuples.join(", ")}`;
    const seed = batch.map((g) => g.id).join("\n");
    return [
      createRequest(c, seed),
      statementRequest(c, { statement, bindings }, uuidFromSeed(`snowflake-insert:${seed}`)),
    ];
  },
  testRequest: (c) => createRequest(c, null),
};
