import fs, { appendFileSync, mkdtempSync, readdirSync, rmSync, truncateSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { SegmentLog } from "../../src/stores/segment-log.js";

/*
 * Segment logs (the ingest log: payloads of accepted batches until they are in the activity store;
 * the gateway's recording journal): what was appended is read back after a restart, exactly; a
 * record cut short by a crash is skipped along with anything after it in that file; released
 * payloads' files are deleted.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const newDir = () => {
  const d = join(mkdtempSync(join(tmpdir(), "gh-ingest-log-")), "activity.duckdb.ingest-log");
  dirs.push(d);
  return d;
};

describe("segment log", () => {
  it("reads back every appended payload exactly (multi-byte text, newlines, separators) after a restart", async () => {
    const dir = newDir();
    const log = SegmentLog.open(dir);
    const payloads = new Map([
      ["a", '{"g":[1]}\nabc\u0001\u0002'],
      ["b", "ünï € 😀\n\nline"],
      ["c", ""],
    ]);
    for (const [t, p] of payloads) await log.append(t, p, t === "b");
    expect(log.get("b")).toBe(payloads.get("b"));
    await log.close();

    const again = SegmentLog.open(dir);
    for (const [t, p] of payloads) expect(again.get(t)).toBe(p);
    await again.close();
  });

  it("skips a record cut short by a crash, and keeps the complete ones before it", async () => {
    const dir = newDir();
    const log = SegmentLog.open(dir);
    await log.append("whole", "x".repeat(1000), false);
    await log.append("cut", "y".repeat(1000), false);
    await log.close();
    const [file] = readdirSync(dir);
    const path = join(dir, file as string);
    truncateSync(path, statSync(path).size - 10);
    const again = SegmentLog.open(dir);
    expect(again.get("whole")).toBe("x".repeat(1000));
    expect(again.get("cut")).toBeUndefined();
    await again.close();

    // Garbage after a complete record (a torn header) is skipped the same way.
    appendFileSync(path, '{"t":"half","b":99');
    const third = SegmentLog.open(dir);
    expect(third.get("whole")).toBe("x".repeat(1000));
    expect(third.get("half")).toBeUndefined();
    await third.close();
  });

  /** Makes the next append's write put only the record's head on disk, then fail, as a full disk does. */
  async function tearNextWrite(dir: string, path: "sync" | "pool"): Promise<() => void> {
    if (path === "sync") {
      const writevSync = fs.writevSync;
      const spy = vi.spyOn(fs, "writevSync").mockImplementationOnce((fd, buffers) => {
        writevSync(fd, [buffers[0] as Buffer]);
        throw new Error("ENOSPC: no space left on device");
      });
      return () => spy.mockRestore();
    }
    // The file handle's class is not exported: take it from a handle of any file.
    const probe = await open(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as { writev: FileHandle["writev"] };
    await probe.close();
    rmSync(join(dir, "probe"));
    const writev = proto.writev;
    const spy = vi.spyOn(proto, "writev").mockImplementationOnce(async function (this: FileHandle, buffers) {
      await writev.call(this, [buffers[0] as Buffer]);
      throw new Error("ENOSPC: no space left on device");
    });
    return () => spy.mockRestore();
  }

  // Small payloads are written on the event loop's thread, large ones on the thread pool.
  it.each([
    ["a small payload (synchronous write)", "sync", "lost"],
    ["a large payload (thread-pool write)", "pool", "l".repeat(100 * 1024)],
  ] as const)(
    "after a write of %s that fails half-way, appends go to a new file, so they are read back",
    async (_, path, lost) => {
      const dir = newDir();
      const log = SegmentLog.open(dir);
      await log.append("before", "kept", false);
      const restore = await tearNextWrite(dir, path);
      await expect(log.append("torn", lost, false)).rejects.toThrow(/ENOSPC/);
      restore();
      await log.append("after", "written after the failure", false);
      await log.close();

      const again = SegmentLog.open(dir);
      expect(again.get("before")).toBe("kept");
      expect(again.get("torn")).toBeUndefined();
      expect(again.get("after")).toBe("written after the failure");
      await again.close();
    },
  );

  it("deletes a file once none of its payloads is needed and it takes no more appends", async () => {
    // All in one millisecond, as on a fast machine: a reopened log still starts a file of its own.
    const at = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(at);
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const dir = newDir();
    const log = SegmentLog.open(dir);
    await log.append("a", "1", false);
    await log.append("b", "2", false);
    await log.close();
    // A restart: the old file takes no more appends; retain() keeps what is still buffered.
    const again = SegmentLog.open(dir);
    again.retain(new Set(["b"]));
    expect(again.get("a")).toBeUndefined();
    expect(readdirSync(dir)).toHaveLength(1);
    await again.append("c", "3", false); // a new file
    expect(readdirSync(dir)).toHaveLength(2);
    again.release(["b"]);
    expect(readdirSync(dir)).toHaveLength(1); // the old file went with its last payload
    again.release(["c"]);
    expect(readdirSync(dir)).toHaveLength(1); // the current file stays while it takes appends
    await again.close();
    expect(readdirSync(dir)).toEqual([]); // closed with nothing needed: gone
  });

  it("a closed file with a payload still needed stays", async () => {
    const dir = newDir();
    const log = SegmentLog.open(dir);
    await log.append("a", "1", false);
    await log.close();
    expect(readdirSync(dir)).toHaveLength(1);
    const again = SegmentLog.open(dir);
    expect(again.get("a")).toBe("1");
    await again.close();
  });

  it("the journal's settings: its own suffix, small segments, appended payloads not kept in memory", async () => {
    const dir = newDir();
    const log = SegmentLog.open(dir, { suffix: ".journal", keepAppended: false, segmentBytes: 500 });
    appendFileSync(join(dir, "000-other.ingest"), ""); // another log's file in the same place: ignored
    for (const t of ["a", "b", "c"]) await log.append(t, t.repeat(600), false);
    expect(log.get("a")).toBeUndefined(); // on disk only
    expect(log.tokens()).toEqual(["a", "b", "c"]);
    expect(log.files()).toHaveLength(3); // each append took its file past 500 bytes
    log.release(["a", "c"]);
    expect(log.files()).toHaveLength(2); // a's file went; c's takes appends
    await log.close();
    expect(readdirSync(dir).sort()).toEqual(["000-other.ingest", log.files()[0]].sort());
    appendFileSync(join(dir, "000-other.ingest"), '{"t":"x","b":1}\nx\n');
    const again = SegmentLog.open(dir, { suffix: ".journal" });
    expect(again.held()).toEqual([["b", "b".repeat(600)]]);
    await again.close();
  });

  describe("appends of one turn in one write (gatherTurn, the journal's setting)", () => {
    it("the appends of a turn share one write, each resolving after it; a later turn's get another; all read back", async () => {
      const dir = newDir();
      const log = SegmentLog.open(dir, { suffix: ".journal", keepAppended: false, gatherTurn: true });
      const settled: string[] = [];
      const first = ["a", "b", "c", "d", "e"].map((t) =>
        log.append(t, `${t}: ünï € 😀\n`.repeat(20), false).then(() => settled.push(t)),
      );
      // Nothing is written within the turn: the write waits for its end.
      expect(log.writes).toBe(0);
      await Promise.all(first);
      expect(log.writes).toBe(1);
      expect(settled).toEqual(["a", "b", "c", "d", "e"]);
      await Promise.all([log.append("f", "f", false), log.append("g", "g", false)]);
      expect(log.writes).toBe(2);
      await log.close();

      const again = SegmentLog.open(dir, { suffix: ".journal" });
      expect(again.held()).toEqual(
        ["a", "b", "c", "d", "e", "f", "g"].map((t) => [
          t,
          "fg".includes(t) ? t : `${t}: ünï € 😀\n`.repeat(20),
        ]),
      );
      await again.close();
    });

    it("more than 256 appends in one turn take more than one write; without gatherTurn, one write per append", async () => {
      const gathered = SegmentLog.open(newDir(), { gatherTurn: true });
      await Promise.all(
        Array.from({ length: 300 }, (_, i) => gathered.append(`t${i}`, "x".repeat(100), false)),
      );
      expect(gathered.writes).toBe(2);
      expect(gathered.tokens()).toHaveLength(300);
      await gathered.close();

      const plain = SegmentLog.open(newDir());
      await Promise.all(Array.from({ length: 5 }, (_, i) => plain.append(`t${i}`, "x", false)));
      expect(plain.writes).toBe(5);
      await plain.close();
    });

    it("a write that fails half-way fails every append of its turn; the next turn's go to a new file and are read back", async () => {
      const dir = newDir();
      const log = SegmentLog.open(dir, { suffix: ".journal", gatherTurn: true });
      await log.append("before", "kept", false);
      const restore = await tearNextWrite(dir, "sync");
      const outcomes = await Promise.allSettled(["x", "y", "z"].map((t) => log.append(t, t, false)));
      restore();
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
      expect(log.tokens()).toEqual(["before"]);
      await Promise.all([log.append("after1", "1", false), log.append("after2", "2", false)]);
      await log.close();
      expect(readdirSync(dir).filter((f) => f.endsWith(".journal"))).toHaveLength(2);

      const again = SegmentLog.open(dir, { suffix: ".journal" });
      expect(again.held()).toEqual([
        ["before", "kept"],
        ["after1", "1"],
        ["after2", "2"],
      ]);
      await again.close();
    });
  });

  it("keeps payloads in memory only for a store in memory", async () => {
    const log = SegmentLog.open(null);
    await log.append("m", "payload", true);
    expect(log.get("m")).toBe("payload");
    log.release(["m"]);
    expect(log.get("m")).toBeUndefined();
    expect(log.files()).toEqual([]);
  });
});
