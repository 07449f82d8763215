import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeLines, importLines } from "../../src/cli/import/import-lines.js";
import { ndjsonLines, type LineChunk } from "../../src/cli/import/ndjson-lines.js";
import { BatchRejected, ingestUrl, parseProblem, type BatchItem } from "../../src/cli/import/sinks.js";
import { readUsage } from "../../src/domain/usage/ledger.js";
import { usdToNano } from "../../src/lib/money.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { cliStoreTargets } from "../helpers/cli-targets.js";
import { gatehouse, gatehouseProcess } from "../helpers/cli.js";
import { startListening } from "../helpers/server.js";

const HOUR = 3_600_000;

/** Valid wire records (docs/generation-record.md), created in the last few days, usage i × 1e-6 USD. */
function records(keyHash: string, prefix: string, n: number, baseMs = Date.now() - 72 * HOUR) {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${i}`,
    created_at: new Date(baseMs + i * 1000).toISOString(),
    api_key_hash: keyHash,
    model: i % 2 ? "openai/gpt-4o" : "anthropic/claude-sonnet-4",
    provider: i % 2 ? "OpenAI" : "Anthropic",
    tokens_prompt: 100 + i,
    tokens_completion: 20,
    usage: (i + 1) / 1e6,
    byok_usage_inference: i % 5 === 0 ? 0.001 : 0,
    is_byok: i % 5 === 0,
    latency_ms: 250,
  }));
}

const ndjson = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
const sumUsage = (rows: { usage: number }[]) => rows.reduce((a, r) => a + usdToNano(r.usage), 0n);

interface Summary {
  lines: number;
  records: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  problem_count: number;
  problems: string[];
  stopped_at: {
    first_line: number;
    last_line: number;
    invalid_lines: number[];
    invalid_count: number;
  } | null;
  records_per_second: number;
}

const TARGETS = cliStoreTargets("gh-import-");

for (const target of TARGETS) {
  describe.skipIf(target.skip)(`gatehouse import on ${target.name}`, () => {
    let env: Record<string, string>;
    let dir: string;
    let openStore: () => Promise<RecordStore>;
    let cleanup: () => Promise<void>;
    let org: { organization_id: string; management_key_hash: string; workspace_id: string };

    /** Both stores, opened after the CLI exited (DuckDB allows one process), closed by the caller. */
    async function inspect<T>(fn: (s: RecordStore, a: ActivityStore) => Promise<T>): Promise<T> {
      const s = await openStore();
      const a = await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") });
      try {
        return await fn(s, a);
      } finally {
        await a.close();
        await s.close();
      }
    }
    const countActivity = (a: ActivityStore, prefix: string) =>
      a
        .query(
          { sql: "SELECT count(*) AS n FROM generations WHERE starts_with(id, $p)", params: { p: prefix } },
          {
            timeoutMs: 10_000,
          },
        )
        .then((rows) => Number(rows[0]?.n));

    beforeAll(async () => {
      const s = await target.setup();
      ({ env, dir, open: openStore, cleanup } = s);
      const created = await gatehouse(["org", "create", "Acme", "--json"], env);
      expect(created).toMatchObject({ code: 0, stderr: "" });
      org = JSON.parse(created.stdout) as typeof org;
    });

    afterAll(async () => {
      await cleanup?.();
    });

    it("imports a file in batches into the first organization, then counts a re-run as duplicates", async () => {
      const rows = records(org.management_key_hash, "ok", 2_345);
      // A byte order mark, CRLF line ends, blank lines and no final newline are all fine.
      const text = "\uFEFF" + ndjson(rows).replace(/\n/g, "\r\n").replace("\r\n", "\r\n\r\n").trimEnd();
      const file = join(dir, "ok.ndjson");
      writeFileSync(file, text);

      const first = await gatehouse(["import", file, "--batch", "500", "--json"], env);
      expect(first.stderr).toBe("");
      expect(first.code).toBe(0);
      const s1 = JSON.parse(first.stdout) as Summary;
      expect(s1).toMatchObject({ lines: 2_346, records: 2_345, accepted: 2_345, duplicates: 0, rejected: 0 });
      expect(s1.stopped_at).toBeNull();
      expect(s1.records_per_second).toBeGreaterThan(0);

      const again = await gatehouse(["import", file, "--org", org.organization_id], env);
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/accepted:\s+0\n/);
      expect(again.stdout).toMatch(/duplicates:\s+2,345 \(already imported: skipped\)/);
      expect(again.stdout).toMatch(/records\/s/);

      await inspect(async (s, a) => {
        expect(await countActivity(a, "ok-")).toBe(2_345);
        const usage = await readUsage(s.db, "key", [org.management_key_hash], new Date());
        const expectedByok = usdToNano(0.001) * BigInt(rows.filter((r) => r.is_byok).length);
        expect(usage.get(org.management_key_hash)?.all).toEqual({
          usage: sumUsage(rows),
          byok: expectedByok,
        });
      });
    });

    it("reads standard input with `-`", async () => {
      const rows = records(org.management_key_hash, "stdin", 300);
      const run = await gatehouse(["import", "-", "--json"], env, { input: ndjson(rows) });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ accepted: 300, duplicates: 0 });
    });

    it("stops at the first invalid batch by default, naming each invalid line, and stores nothing of that batch", async () => {
      const rows: unknown[] = records(org.management_key_hash, "stop", 250);
      (rows[120] as { tokens_prompt: number }).tokens_prompt = -1; // line 121
      (rows[130] as { api_key_hash: string }).api_key_hash = "f".repeat(64); // line 131
      const lines = ndjson(rows).split("\n");
      lines[140] = "{not json"; // line 141
      const file = join(dir, "stop.ndjson");
      writeFileSync(file, lines.join("\n"));

      const run = await gatehouse(["import", file, "--batch", "100", "--json"], env);
      expect(run.code).toBe(1);
      const s = JSON.parse(run.stdout) as Summary;
      expect(s).toMatchObject({ accepted: 100, duplicates: 0, rejected: 100, problem_count: 3 });
      expect(s.stopped_at).toEqual({
        first_line: 101,
        last_line: 200,
        invalid_lines: [121, 131, 141],
        invalid_count: 3,
      });
      expect(s.problems).toEqual([
        "line 121: tokens_prompt: must be an integer >= 0",
        "line 131: api_key_hash: no key with this hash in the organization",
        "line 141: is not valid JSON",
      ]);
      expect(run.stderr).toContain(
        "invalid records in the batch of lines 101-200; nothing of that batch was stored",
      );
      expect(run.stderr).toContain("line 121: tokens_prompt: must be an integer >= 0");
      expect(run.stderr).toContain("--skip-invalid");
      expect(run.stderr).toContain(
        "import stopped at invalid lines 121, 131, 141 after 100 accepted records",
      );
      await inspect(async (_s, a) => expect(await countActivity(a, "stop-")).toBe(100));

      // The human form says the same on stderr, with exit code 1.
      const human = await gatehouse(["import", file, "--batch", "100"], env);
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(/^Import stopped: /);
      expect(human.stdout).toMatch(/duplicates:\s+100 /);
    });

    it("names the invalid lines, not the batch's first line, when it stops", async () => {
      const rows: unknown[] = records(org.management_key_hash, "lines", 12);
      for (let i = 2; i <= 8; i++) (rows[i] as { usage: number }).usage = -1; // lines 3-9
      const run = await gatehouse(["import", "-"], env, { input: ndjson(rows) });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("import stopped at invalid lines 3-9 after 0 accepted records");
      expect(run.stderr).not.toContain("line 1 ");
      await inspect(async (_s, a) => expect(await countActivity(a, "lines-")).toBe(0));
    });

    it("--skip-invalid imports the valid records, reports the others and writes them to --rejects", async () => {
      const rows: unknown[] = records(org.management_key_hash, "skip", 250);
      (rows[10] as { usage: number }).usage = -1;
      (rows[11] as { model: string }).model = "no-slash";
      const lines = ndjson(rows).split("\n");
      lines[200] = "[1, 2"; // line 201
      const file = join(dir, "skip.ndjson");
      const rejects = join(dir, "skip.rejects.ndjson");
      writeFileSync(file, lines.join("\n"));

      const run = await gatehouse(
        ["import", file, "--batch", "100", "--skip-invalid", "--rejects", rejects, "--json"],
        env,
      );
      expect(run.code).toBe(0);
      const s = JSON.parse(run.stdout) as Summary;
      expect(s).toMatchObject({ records: 250, accepted: 247, duplicates: 0, rejected: 3, problem_count: 3 });
      expect(s.problems).toEqual([
        "line 11: usage: must be a number >= 0",
        "line 12: model: must be a provider/model permaslug",
        "line 201: is not valid JSON",
      ]);
      expect(run.stderr).toContain("3 invalid records skipped");
      expect(readFileSync(rejects, "utf8")).toBe([lines[10], lines[11], lines[200]].join("\n") + "\n");
      await inspect(async (_s, a) => expect(await countActivity(a, "skip-")).toBe(247));
    });

    it("refuses bad arguments with exit code 2 and a missing file or organization with exit code 1", async () => {
      const file = join(dir, "ok.ndjson");
      const [batch0, batchBig, rejects, keyOnly, orgWithUrl, urlNoKey, missing, unknownOrg] =
        await Promise.all([
          gatehouse(["import", file, "--batch", "0"], env),
          gatehouse(["import", file, "--batch", "10001"], env),
          gatehouse(["import", file, "--rejects", join(dir, "r")], env),
          gatehouse(["import", file, "--key", "x"], env),
          gatehouse(
            ["import", file, "--url", "http://127.0.0.1:1", "--key", "k", "--org", org.organization_id],
            env,
          ),
          gatehouse(["import", file, "--url", "http://127.0.0.1:1"], env),
          gatehouse(["import", join(dir, "nope.ndjson")], env),
          gatehouse(["import", file, "--org", "00000000-0000-4000-8000-000000000000"], env),
        ]);
      expect(batch0).toMatchObject({ code: 2, stdout: "" });
      expect(batch0.stderr).toContain("--batch: must be an integer from 1 to 10,000");
      expect(batchBig.code).toBe(2);
      expect(rejects.stderr).toContain("--rejects: only with --skip-invalid");
      const emptyRejects = await gatehouse(["import", file, "--skip-invalid", "--rejects", ""], env);
      expect(emptyRejects).toMatchObject({
        code: 2,
        stdout: "",
        stderr: "gatehouse: --rejects: must name a file\n",
      });
      expect(keyOnly.stderr).toContain("--key: only with --url");
      expect(orgWithUrl.stderr).toContain("--org: not with --url");
      expect(urlNoKey.stderr).toContain("--url: needs --key");
      for (const r of [rejects, keyOnly, orgWithUrl, urlNoKey]) expect(r.code).toBe(2);
      expect(missing).toMatchObject({ code: 1, stdout: "" });
      expect(missing.stderr).toContain("nope.ndjson: no such file");
      expect(unknownOrg.code).toBe(1);
      expect(unknownOrg.stderr).toContain("organization 00000000-0000-4000-8000-000000000000 not found");
    });

    it("says to use --url when a server holds the DuckDB file", async () => {
      // This process holds the file, as a running server would; the command runs in its own.
      const holder = await openDuckDbActivityStore({ path: join(dir, "activity.duckdb") });
      try {
        const run = await gatehouseProcess(["import", join(dir, "ok.ndjson")], env);
        expect(run).toMatchObject({ code: 1, stdout: "" });
        expect(run.stderr).toContain("is in use by another process");
        expect(run.stderr).toContain("--url http://HOST:PORT --key MANAGEMENT_KEY");
      } finally {
        await holder.close();
      }
    });
  });
}

describe("gatehouse import --url (through a running server)", () => {
  it("posts NDJSON batches to POST /activity/generations, skipping invalid records, idempotently", async () => {
    const t = await startListening();
    const dir = mkdtempSync(join(tmpdir(), "gh-import-url-"));
    try {
      const { hashKey } = await import("../../src/lib/ids.js");
      const hash = hashKey(t.key);
      // The test server's clock is 2026-11-18T12:00:00Z.
      const rows: unknown[] = records(hash, "url", 1_200, Date.parse("2026-11-17T00:00:00Z"));
      (rows[5] as { latency_ms: number }).latency_ms = -3;
      const file = join(dir, "url.ndjson");
      writeFileSync(file, ndjson(rows));
      // Only PATH and HOME: the CLI opens no store in this mode.
      const run = await gatehouse(
        [
          "import",
          file,
          "--url",
          t.baseUrl.replace(/\/api\/v1$/, ""),
          "--key",
          t.key,
          "--skip-invalid",
          "--json",
        ],
        {},
      );
      expect(run.stderr).toContain("line 6: latency_ms: must be a number >= 0");
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ accepted: 1_199, duplicates: 0, rejected: 1 });

      const again = await gatehouse(["import", file, "--url", t.baseUrl, "--skip-invalid", "--json"], {
        GATEHOUSE_KEY: t.key,
      });
      expect(JSON.parse(again.stdout)).toMatchObject({ accepted: 0, duplicates: 1_199, rejected: 1 });

      const n = await t.ctx.activity.query(
        {
          sql: "SELECT count(*) AS n FROM generations WHERE organization_id = $org",
          params: { org: t.organizationId },
        },
        { timeoutMs: 10_000 },
      );
      expect(Number(n[0]?.n)).toBe(1_199);

      const denied = await gatehouse(
        ["import", file, "--url", t.baseUrl, "--key", `sk-gh-v1-${"0".repeat(64)}`],
        {},
      );
      expect(denied.code).toBe(1);
      expect(denied.stderr).toContain("answered 401");
    } finally {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("gatehouse import --url (not a Gatehouse server)", () => {
  it("refuses a key with a line break (exit 2, naming where it came from, never echoing it)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gh-import-key-"));
    try {
      const file = join(dir, "one.ndjson");
      writeFileSync(file, ndjson(records("0".repeat(64), "key", 1)));
      const url = "http://127.0.0.1:1";
      const [flag, env] = await Promise.all([
        gatehouse(["import", file, "--url", url, "--key", "sk-secret\n"], {}),
        gatehouse(["import", file, "--url", url], { GATEHOUSE_KEY: "sk-secret\r\n" }),
      ]);
      expect(flag).toMatchObject({
        code: 2,
        stdout: "",
        stderr: "gatehouse: --key: must not contain control characters (a line break?)\n",
      });
      expect(env).toMatchObject({
        code: 2,
        stdout: "",
        stderr: "gatehouse: GATEHOUSE_KEY: must not contain control characters (a line break?)\n",
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the URL and what answered when the answer is not Gatehouse's JSON (an HTML page)", async () => {
    const page = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end("<!doctype html><title>Welcome</title>");
    });
    page.listen(0, "127.0.0.1");
    await once(page, "listening");
    const dir = mkdtempSync(join(tmpdir(), "gh-import-html-"));
    try {
      const file = join(dir, "one.ndjson");
      writeFileSync(file, ndjson(records("0".repeat(64), "html", 1)));
      const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
      const run = await gatehouse(["import", file, "--url", url, "--key", "k"], {});
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `gatehouse: ${url}/api/v1/activity/generations?broadcast=false answered 200 with text/html, ` +
          "not Gatehouse's JSON: is --url the address of a Gatehouse server?",
      );
    } finally {
      page.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// In-process: the line splitter and the batch loop.

async function* chunksOf(parts: (string | Buffer)[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield typeof p === "string" ? Buffer.from(p, "utf8") : p;
}

async function collect(gen: AsyncIterable<LineChunk>) {
  const out: { line: number; text: string | null }[] = [];
  for await (const c of gen) out.push(...c.lines);
  return out;
}

describe("ndjsonLines", () => {
  it("splits across chunk boundaries, multi-byte characters included, and numbers lines from 1", async () => {
    const euro = Buffer.from("€", "utf8");
    const lines = await collect(
      ndjsonLines(
        chunksOf(["\uFEFFab", "c\nd", euro.subarray(0, 1), euro.subarray(1), "e\r\n\n", "last"]),
        100,
      ),
    );
    expect(lines).toEqual([
      { line: 1, text: "abc" },
      { line: 2, text: "d€e\r" },
      { line: 3, text: "" },
      { line: 4, text: "last" },
    ]);
  });

  it("reports a line longer than the limit without keeping it, and goes on", async () => {
    const lines = await collect(
      ndjsonLines(chunksOf(["short\n", "x".repeat(30), "x".repeat(30), "\nok\n"]), 50),
    );
    expect(lines).toEqual([
      { line: 1, text: "short" },
      { line: 2, text: null },
      { line: 3, text: "ok" },
    ]);
  });

  it("reports the bytes consumed so far with each chunk of lines", async () => {
    const sizes: number[] = [];
    for await (const c of ndjsonLines(chunksOf(["a\nb", "\nc"]), 10)) sizes.push(c.bytes);
    expect(sizes).toEqual([3, 5, 5]);
  });
});

describe("importLines", () => {
  const opts = {
    batchSize: 10,
    maxBatchChars: 1_000_000,
    maxLineChars: 1_000,
    maxProblems: 5,
  };
  const input = (n: number) => {
    const text = Array.from({ length: n }, (_, i) => JSON.stringify({ i, bad: i % 7 === 3 })).join("\n");
    return ndjsonLines(chunksOf([text]), 1_000);
  };
  /** A sink that refuses records with bad: true, listing at most 2 problems per answer (like the 100 cap). */
  function fakeSink() {
    const stored: number[] = [];
    let calls = 0;
    return {
      stored,
      calls: () => calls,
      submit: async (items: readonly BatchItem[]) => {
        calls += 1;
        const bad = items.flatMap((it, index) => ((it.value as { bad: boolean }).bad ? [index] : []));
        if (bad.length > 0) {
          throw new BatchRejected(
            bad.slice(0, 2).map((index) => ({ index, message: "bad: must be false" })),
            bad.length,
          );
        }
        stored.push(...items.map((it) => (it.value as { i: number }).i));
        return { accepted: items.length, duplicates: 0 };
      },
    };
  }

  it("with skipInvalid, resubmits a batch without the records each answer names until it is stored", async () => {
    const sink = fakeSink();
    const rejected: number[] = [];
    const s = await importLines(input(50), sink, {
      ...opts,
      skipInvalid: true,
      onRejected: (line) => void rejected.push(line),
    });
    const bad = Array.from({ length: 50 }, (_, i) => i).filter((i) => i % 7 === 3);
    expect(s).toMatchObject({
      records: 50,
      accepted: 50 - bad.length,
      rejected: bad.length,
      stoppedAt: null,
    });
    expect(s.problemCount).toBe(bad.length);
    expect(s.problems).toHaveLength(5);
    expect(s.problems[0]).toBe("line 4: bad: must be false");
    expect(rejected).toEqual(bad.map((i) => i + 1));
    expect(sink.stored.sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i).filter((i) => i % 7 !== 3),
    );
  });

  it("without skipInvalid, stops at the first rejected batch and reads no further", async () => {
    const sink = fakeSink();
    const s = await importLines(input(50), sink, { ...opts, batchSize: 20, skipInvalid: false });
    expect(s).toMatchObject({
      accepted: 0,
      rejected: 20,
      stoppedAt: { firstLine: 1, lastLine: 20, invalidLines: [4, 11], invalidCount: 3 },
    });
    // Records 3, 10 and 17 are invalid: two listed, all three counted.
    expect(s.problems).toEqual(["line 4: bad: must be false", "line 11: bad: must be false"]);
    expect(s.problemCount).toBe(3);
    expect(sink.calls()).toBe(1);
  });
});

describe("import helpers", () => {
  it("describes line numbers as ascending ranges, and how many more there are", () => {
    expect(describeLines([3, 4, 5, 6, 7, 8, 9])).toBe("3-9");
    expect(describeLines([15, 12, 16])).toBe("12, 15-16");
    expect(describeLines([7])).toBe("7");
    expect(describeLines([4, 11], 3)).toBe("4, 11 and 1 more");
    expect(describeLines([1, 3, 5, 7], 4, 2)).toBe("1, 3 and 2 more");
  });

  it("maps ingest problems to the record index and the field", () => {
    expect(parseProblem("generations[17].tokens_prompt: must be an integer >= 0")).toEqual({
      index: 17,
      message: "tokens_prompt: must be an integer >= 0",
    });
    expect(parseProblem("generations[3]: is not valid JSON (line 4)")).toEqual({
      index: 3,
      message: "is not valid JSON (line 4)",
    });
    expect(parseProblem("generations: at least 1 record")).toEqual({
      index: null,
      message: "generations: at least 1 record",
    });
  });

  it("builds the ingest URL from a server base with or without /api/v1", () => {
    expect(ingestUrl("http://h:8080")).toBe("http://h:8080/api/v1/activity/generations");
    expect(ingestUrl("http://h:8080/")).toBe("http://h:8080/api/v1/activity/generations");
    expect(ingestUrl("https://h/api/v1/")).toBe("https://h/api/v1/activity/generations");
    expect(ingestUrl("https://h/gw")).toBe("https://h/gw/api/v1/activity/generations");
  });
});
