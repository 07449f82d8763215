import { createClient } from "@clickhouse/client";
import { DuckDBInstance } from "@duckdb/node-api";
import { drainPending } from "chdb";
import { createChdbConnection } from "chdb/connection";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FIRST_GENERATION_COLUMNS } from "../../src/stores/activity-columns.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openClickHouseServerStore } from "../../src/stores/clickhouse/server-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { activityRow } from "../helpers/activity-stores.js";

/*
 * A column added to the field table after the first schema (the generation's `api`) reaches an
 * activity store created by an earlier version: the store adds it at open, rows stored before
 * read null, new rows keep their value, and the DuckDB appender (which writes by position) still
 * puts every value in its column.
 */
const ORG = "00000000-0000-4000-8000-00000000000a";
const DUCK_TYPES: Record<string, string> = {
  string: "VARCHAR NOT NULL",
  "string?": "VARCHAR",
  timestamp: "TIMESTAMP NOT NULL",
  int64: "BIGINT NOT NULL",
  "int64?": "BIGINT",
  bool: "BOOLEAN NOT NULL",
  float64: "DOUBLE NOT NULL",
  "float64?": "DOUBLE",
};

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "gatehouse-added-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function apiOf(store: ActivityStore, id: string, param: string): Promise<unknown> {
  const [r] = await store.query(
    { sql: `SELECT api, model FROM generations WHERE id = ${param}`, params: { id } },
    { timeoutMs: 10_000 },
  );
  return r;
}

describe("columns added after the first schema", () => {
  it("DuckDB: a file made with the first schema gains the column; old rows read null", async () => {
    const file = join(tempDir(), "activity.duckdb");
    const old = await DuckDBInstance.create(file);
    const conn = await old.connect();
    await conn.run(
      `CREATE TABLE generations (${FIRST_GENERATION_COLUMNS.map((c) => `${c.name} ${DUCK_TYPES[c.kind]}`).join(", ")})`,
    );
    await conn.run(
      `INSERT INTO generations (organization_id, id, created_at, api_key_id, api_key_hash, model, provider,
        context_length_bucket, tokens_prompt, tokens_completion, tokens_reasoning, tokens_cached, is_byok,
        streamed, cancelled, response_cached, guardrail_invoked, usage_nano, byok_usage_inference_nano,
        usage_upstream_nano, usage_cache_nano, usage_data_nano, usage_web_nano, usage_upstream_web_nano,
        usage_file_nano, usage_upstream_file_nano, usage_web_fetch_nano, usage_upstream_web_fetch_nano,
        latency_ms)
       VALUES ('${ORG}', 'old', TIMESTAMP '2026-11-01 00:00:00', 1, '${"a".repeat(64)}', 'm/old', 'p', '0-1K',
        1, 1, 0, 0, false, false, false, false, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)`,
    );
    conn.closeSync();
    old.closeSync();

    const store = await openDuckDbActivityStore({ path: file });
    try {
      await store.insert(
        [activityRow({ organization_id: ORG, id: "new", model: "m/new", api: "responses" })],
        [],
      );
      expect(await apiOf(store, "old", "$id")).toEqual({ api: null, model: "m/old" });
      expect(await apiOf(store, "new", "$id")).toEqual({ api: "responses", model: "m/new" });
    } finally {
      await store.close();
    }
    // Opened again: the column is there once, nothing is added twice.
    const again = await openDuckDbActivityStore({ path: file });
    try {
      expect(await apiOf(again, "new", "$id")).toEqual({ api: "responses", model: "m/new" });
    } finally {
      await again.close();
    }
  });

  it("ClickHouse (chDB through @clickhouse/client): an existing table gains the column", async () => {
    const dir = tempDir();
    const client = createClient({ connection: createChdbConnection({ path: dir }) } as never);
    await client.command({
      query:
        `CREATE TABLE generations (${FIRST_GENERATION_COLUMNS.map((c) => `${c.name} ${c.kind.endsWith("?") ? "Nullable(String)" : "String"}`).join(", ")}) ` +
        "ENGINE = MergeTree ORDER BY (organization_id, id)",
    });
    const store = await openClickHouseServerStore({ client });
    try {
      const [cols] = await store.query(
        {
          sql: "SELECT count() AS n FROM system.columns WHERE table = 'generations' AND name = 'api'",
          params: {},
        },
        { timeoutMs: 10_000 },
      );
      expect(Number(cols?.n)).toBe(1);
    } finally {
      await store.close();
      await drainPending();
    }
  });
});
