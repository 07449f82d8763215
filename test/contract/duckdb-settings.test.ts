import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { openActivityStore } from "../../src/stores/open-activity-store.js";

const dir = mkdtempSync(join(tmpdir(), "gh-duckdb-settings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const setting = async (config: ReturnType<typeof loadConfig>, name: string): Promise<unknown> => {
  const activity = await openActivityStore(config);
  try {
    const [row] = await activity.query(
      { sql: "SELECT current_setting($name) AS v", params: { name } },
      { timeoutMs: 10_000 },
    );
    return row?.v;
  } finally {
    await activity.close();
  }
};

describe("embedded DuckDB settings from the configuration", () => {
  it("applies DUCKDB_MEMORY_LIMIT and DUCKDB_THREADS to the activity store", async () => {
    const config = loadConfig({
      GATEHOUSE_DATA_DIR: dir,
      DUCKDB_MEMORY_LIMIT: "300MiB",
      DUCKDB_THREADS: "1",
    });
    expect(await setting(config, "memory_limit")).toBe("300.0 MiB");
    expect(await setting(config, "threads")).toBe(1n);
  });

  it("keeps DuckDB's own defaults when unset", async () => {
    const config = loadConfig({ GATEHOUSE_DATA_DIR: dir });
    expect(await setting(config, "memory_limit")).not.toBe("300.0 MiB");
  });
});
