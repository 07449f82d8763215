import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { LOG_BUFFER_BYTES, LogDestination, loggerOptions } from "../../src/http/logger.js";
import { ROOT } from "../helpers/compiled.js";

/**
 * The production log destination (src/http/logger.ts) writing to a real file: request lines are
 * gathered into one write, buffered lines go out on the periodic flush, and a warn line goes out at
 * once with everything before it.
 */
describe("log lines: buffered writes", () => {
  const open: { dir: string; out: LogDestination }[] = [];
  afterEach(() => {
    for (const o of open.splice(0)) {
      // close() writes what is held and closes the file descriptor itself.
      o.out.close();
      rmSync(o.dir, { recursive: true, force: true });
    }
  });

  /** A logger with the production options on a file; `lines()` reads what reached the file. */
  const fileLogger = (flushMs?: number) => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-log-"));
    const file = join(dir, "out.log");
    const fd = openSync(file, "a");
    const out = new LogDestination(fd, flushMs);
    open.push({ dir, out });
    let writes = 0;
    out.file.on("write", () => writes++);
    const opts = loggerOptions(
      loadConfig({ GATEHOUSE_DATA_DIR: dir, LOG_LEVEL: "info" }),
      out,
    ) as pino.LoggerOptions;
    const log = pino(opts, out.stream);
    const lines = () =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as { msg: string; level: number });
    return { log, lines, out, file, writes: () => writes };
  };

  const until = async (cond: () => boolean, ms = 10_000): Promise<void> => {
    const end = Date.now() + ms;
    while (!cond()) {
      if (Date.now() > end) throw new Error("timed out");
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  it("twenty info lines logged together reach the file in one write, on the periodic flush", async () => {
    const f = fileLogger();
    for (let i = 0; i < 20; i++) f.log.info({ n: i }, "request completed");
    await until(() => f.lines().length === 20);
    // Periodic flushes with nothing new write nothing.
    await new Promise((r) => setTimeout(r, 500));
    // Unbuffered, the first line would have gone out alone and the rest in a second write.
    expect(f.writes()).toBe(1);
    expect(f.lines().map((l) => l.msg)).toEqual(Array.from({ length: 20 }, () => "request completed"));
  });

  it("a warn line is written at once, with the info lines before it; info alone waits for the flush", async () => {
    // A periodic flush of an hour: only the warn line can get anything written within the test.
    const f = fileLogger(3_600_000);
    f.log.info("before");
    await new Promise((r) => setTimeout(r, 200));
    expect(f.lines()).toEqual([]);
    f.log.warn("something to see now");
    await until(() => f.lines().length === 2);
    expect(f.lines().map((l) => l.msg)).toEqual(["before", "something to see now"]);
  });

  it("lines logged while a write is in progress are written when it ends, not left behind", async () => {
    // The server's start: a warn (written at once: an asynchronous write begins), then two info
    // lines and a flush in the same turn, while that write is still in progress. sonic-boom's own
    // flush does nothing then, and once the write ends, less than minLength stays buffered: before
    // this was handled, "listening" never reached stdout until more lines came (a process that
    // waits for it to start hung). The periodic flush is an hour away: only the end of the
    // write can get the rest written.
    const f = fileLogger(3_600_000);
    f.log.warn("dashboard not served");
    f.log.info("server listening");
    f.log.info("gatehouse listening");
    f.out.flush();
    await until(() => f.lines().length === 3, 5_000);
    expect(f.lines().map((l) => l.msg)).toEqual([
      "dashboard not served",
      "server listening",
      "gatehouse listening",
    ]);
    // Counted as written once the write's callback has run, which can come a moment after the
    // bytes are in the file (on a loaded machine it did): waited for, not read at once.
    await until(() => f.out.buffered === 0, 5_000);
    // Nothing left: a later flush writes nothing.
    const writes = f.writes();
    f.out.flush();
    await new Promise((r) => setTimeout(r, 200));
    expect(f.writes()).toBe(writes);
  });

  it("after a flush, lines logged turn after turn still go out in writes of LOG_BUFFER_BYTES, not one per write's end", async () => {
    // The periodic flush an hour away: only the explicit flush below and minLength write.
    const f = fileLogger(3_600_000);
    f.log.info("before the flush");
    f.out.flush();
    await until(() => f.lines().length === 1);
    // A steady stream of request lines, a few per turn, as under load. A flush that repeated
    // itself at every write's end (as it did until this test) wrote a few lines at a time.
    const bytesBefore = readFileSync(f.file).length;
    const writesBefore = f.writes();
    const line = {
      reqId: "req-123456",
      req: { method: "POST", url: "/api/v1/chat/completions" },
      res: { statusCode: 200 },
    };
    for (let i = 0; i < 2_000; i++) {
      f.log.info(line, "request completed");
      if (i % 4 === 3) await new Promise((r) => setImmediate(r));
    }
    f.out.flush();
    await until(() => f.lines().length === 2_001);
    const bytes = readFileSync(f.file).length - bytesBefore;
    const writes = f.writes() - writesBefore;
    // Every write but the last (the flush's) carries at least LOG_BUFFER_BYTES.
    expect(writes).toBeLessThanOrEqual(Math.ceil(bytes / LOG_BUFFER_BYTES) + 1);
    expect(writes).toBeGreaterThan(1);
  });

  it("lines gathered below the buffer's size are written when the process exits", () => {
    // The compiled logger in a process of its own: info lines (held: the periodic flush is an
    // hour away), then process.exit(), which runs no timer and awaits no promise. (Node does let
    // libuv's pool finish the writes queued on it at exit; the lines leave synchronously anyway,
    // so that an exit does not wait behind other work on the pool.)
    const script = `
      import pino from "pino";
      import { LogDestination, loggerOptions } from ${JSON.stringify(join(ROOT, "dist/src/http/logger.js"))};
      const out = new LogDestination(1, 3_600_000);
      const log = pino(loggerOptions({ logLevel: "info" }, out), out.stream);
      for (let i = 0; i < 50; i++) log.info({ n: i }, "request completed");
      process.exit(0);
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as { n: number; msg: string });
    expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it("lines of several writes' worth, logged in one turn, reach the file whole and in order", async () => {
    const f = fileLogger(3_600_000);
    const text = "é".repeat(300); // two bytes each in UTF-8: byte and character counts differ
    const n = Math.ceil((5 * LOG_BUFFER_BYTES) / 700);
    for (let i = 0; i < n; i++) f.log.info({ i, text }, "request completed");
    f.out.flush();
    await until(() => f.out.buffered === 0);
    const lines = f.lines() as unknown as { i: number; text: string }[];
    expect(lines.map((l) => l.i)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(lines.every((l) => l.text === text)).toBe(true);
    // Chunks of LOG_BUFFER_BYTES at least, not a write per line.
    expect(f.writes()).toBeLessThanOrEqual(Math.ceil(readFileSync(f.file).length / LOG_BUFFER_BYTES) + 1);
  });

  it("while stdout takes nothing (a stalled reader), lines past the buffer's bound are dropped and counted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-log-"));
    const fifo = join(dir, "stalled");
    execFileSync("mkfifo", [fifo]);
    // Both ends held by this process and never read: the pipe fills and then refuses writes.
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const out = new LogDestination(fd, 10, 256 * 1024);
    const log = pino(
      loggerOptions(loadConfig({ GATEHOUSE_DATA_DIR: dir, LOG_LEVEL: "info" }), out) as pino.LoggerOptions,
      out.stream,
    );
    const line = "x".repeat(1_000);
    for (let i = 0; i < 5_000; i++) log.info({ line }, "request completed"); // ~5 MB
    await new Promise((r) => setTimeout(r, 200));
    expect(out.dropped).toBeGreaterThan(0);
    // What is held is bounded by the buffer (the kernel's pipe holds the rest of what was written).
    expect(out.buffered).toBeLessThanOrEqual(256 * 1024);

    // The reader comes back: what was held is written, nothing is left waiting (so no write is
    // retried after the descriptor is closed), and new lines flow again.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const chunk = Buffer.alloc(1 << 16);
    const drain = () => {
      try {
        while (readSync(reader, chunk) > 0);
      } catch {
        // EAGAIN: empty for now
      }
    };
    const dropped = out.dropped;
    await until(() => (drain(), out.buffered === 0));
    log.info("after the stall");
    await until(() => (drain(), out.buffered === 0));
    expect(out.dropped).toBe(dropped);
    closeSync(reader);
    open.push({ dir, out }); // closed like the others (nothing is left to write)
  });
});
