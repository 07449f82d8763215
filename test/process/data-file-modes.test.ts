import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { newKeyString } from "../../src/lib/ids.js";
import { http, killAll, startServer, stopServer, tempDataDir } from "../helpers/child-server.js";

/**
 * The data directory holds prompts waiting for delivery, error texts and the data key: after a
 * start (and some traffic, so that every store has written its journals), everything Gatehouse
 * created there is its user's alone (files 0600, directories 0700), whatever the umask it was
 * started with; files an older version left readable are tightened.
 */
afterAll(() => killAll());

/** Every entry below dir with its kind and permission bits, as "path dir|file mode" lines (octal). */
function modes(dir: string, prefix = ""): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const st = statSync(path);
    const line = `${prefix}${name} ${st.isDirectory() ? "dir" : "file"} ${(st.mode & 0o777).toString(8)}`;
    return st.isDirectory() ? [line, ...modes(path, `${prefix}${name}/`)] : [line];
  });
}

async function exercise(base: string, key: string): Promise<void> {
  const made = await http(`${base}/keys`, { method: "POST", key, body: { name: "app", limit: 1 } });
  expect(made.status).toBe(201);
  const app = (made.body as { key: string }).key;
  const chat = await http(`${base}/chat/completions`, {
    method: "POST",
    key: app,
    body: { model: "mock/echo", messages: [{ role: "user", content: "hello" }] },
  });
  expect(chat.status).toBe(200);
}

describe("data file modes", () => {
  it("a new data directory is 0700 and every file Gatehouse creates in it 0600", async () => {
    const parent = tempDataDir();
    const dir = join(parent, "data");
    const key = newKeyString();
    const s = await startServer({ GATEHOUSE_DATA_DIR: dir, GATEHOUSE_BOOTSTRAP_KEY: key });
    // Looked at while it runs (SQLite removes its WAL and SHM at a clean close) and after it stops.
    const seen: string[] = [];
    try {
      await exercise(s.base, key);
      seen.push(...modes(dir));
    } finally {
      expect((await stopServer(s)).code).toBe(0);
    }
    seen.push(...modes(dir));
    expect((statSync(dir).mode & 0o777).toString(8)).toBe("700");
    for (const name of ["gatehouse.sqlite", "gatehouse.sqlite-wal", "activity.duckdb", "encryption.key"]) {
      expect(seen).toContain(`${name} file 600`);
    }
    expect(seen.filter((e) => !e.endsWith(" file 600") && !e.endsWith(" dir 700"))).toEqual([]);
  });

  it("files an older version created readable by others are made private at start", async () => {
    const dir = tempDataDir();
    const key = newKeyString();
    const first = await startServer({ GATEHOUSE_DATA_DIR: dir, GATEHOUSE_BOOTSTRAP_KEY: key });
    expect((await stopServer(first)).code).toBe(0);
    chmodSync(join(dir, "gatehouse.sqlite"), 0o644);
    chmodSync(join(dir, "activity.duckdb"), 0o644);
    // An operator's own file beside them is theirs to decide about.
    writeFileSync(join(dir, "NOTES.txt"), "ours", { mode: 0o644 });
    chmodSync(join(dir, "NOTES.txt"), 0o644);
    mkdirSync(join(dir, "backups"), { mode: 0o755 });
    const mode = (name: string) => (statSync(join(dir, name)).mode & 0o777).toString(8);
    const again = await startServer({ GATEHOUSE_DATA_DIR: dir, GATEHOUSE_BOOTSTRAP_KEY: key });
    try {
      await exercise(again.base, key);
      // SQLite creates its WAL with the database file's own mode.
      expect(mode("gatehouse.sqlite-wal")).toBe("600");
    } finally {
      expect((await stopServer(again)).code).toBe(0);
    }
    expect(mode("gatehouse.sqlite")).toBe("600");
    expect(mode("activity.duckdb")).toBe("600");
    expect(mode("NOTES.txt")).toBe("644");
    expect(mode("backups")).toBe("755");
  });
});
