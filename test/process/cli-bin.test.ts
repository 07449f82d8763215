import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import { gatehouseProcess } from "../helpers/cli.js";

/**
 * The `gatehouse` bin as an operator runs it, in a process of its own: what the in-process runs of
 * test/cli/ cannot show. The exit status the bin sets (0, 1 and 2), output on the real standard
 * streams, standard input read by `import -`, and the data files a command creates made private
 * by the bin's umask. Each command's behaviour is tested in test/cli/, in this test process.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), "gh-bin-"));
  dirs.push(d);
  return d;
};

describe("the gatehouse bin", () => {
  it("creates an organization (exit 0), its files private; imports standard input with `-`", async () => {
    const dir = dataDir();
    const env = { GATEHOUSE_DATA_DIR: dir };
    const created = await gatehouseProcess(["org", "create", "Acme", "--json"], env);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const org = JSON.parse(created.stdout) as { management_key: string; management_key_hash: string };
    expect(org.management_key).toMatch(/^sk-gh-v1-[0-9a-f]{64}$/);
    // The bin's umask: every file it created is readable by its owner only.
    const files = readdirSync(dir);
    expect(files).toContain("gatehouse.sqlite");
    for (const f of files) expect((statSync(join(dir, f)).mode & 0o777).toString(8), f).toBe("600");

    const lines = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({
        id: `bin-${i}`,
        created_at: new Date(Date.now() - 3_600_000 + i * 1000).toISOString(),
        api_key_hash: org.management_key_hash,
        model: "openai/gpt-4o",
        provider: "OpenAI",
        tokens_prompt: 10,
        tokens_completion: 2,
        usage: 0.000_01,
        latency_ms: 100,
      }),
    ).join("\n");
    const imported = await gatehouseProcess(["import", "-", "--json"], env, { input: lines });
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ records: 20, accepted: 20, duplicates: 0 });
    const activity = await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") });
    try {
      const [row] = await activity.query(
        { sql: "SELECT count(*) AS n FROM generations WHERE starts_with(id, 'bin-')", params: {} },
        { timeoutMs: 10_000 },
      );
      expect(Number(row!.n)).toBe(20);
    } finally {
      await activity.close();
    }
  });

  it("prints help with exit 0, and exits 2 on a usage error naming it", async () => {
    const dir = dataDir();
    const help = await gatehouseProcess(["--help"], { GATEHOUSE_DATA_DIR: dir });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: gatehouse/);
    expect(help.stdout).toContain("reconcile");
    const usage = await gatehouseProcess(["org", "create"], { GATEHOUSE_DATA_DIR: dir });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("missing required argument 'name'");
    expect(readdirSync(dir)).toEqual([]); // nothing was opened or created
  });

  it("exits 1 with the cause on stderr when the record store cannot be reached", async () => {
    const run = await gatehouseProcess(["org", "list"], {
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
      GATEHOUSE_DATA_DIR: dataDir(),
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^gatehouse: .*ECONNREFUSED/);
  });
});
