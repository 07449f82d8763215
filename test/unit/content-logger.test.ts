import { describe, expect, it } from "vitest";
import type { LiveContext } from "../../src/broadcast/live-context.js";
import type { IoLoggingPolicy, KeyPolicy, WorkspacePolicy } from "../../src/domain/policy/policy.js";
import { ContentLogger } from "../../src/gateway/content-log/content-logger.js";
import { startContentSweep } from "../../src/gateway/content-log/content-sweep.js";
import { logsContent } from "../../src/gateway/content-log/io-logging.js";
import { ManualClock } from "../../src/lib/clock.js";
import { SecretBox } from "../../src/lib/secret-box.js";
import type { Db } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { keyPolicy, workspacePolicy } from "../helpers/policies.js";

const io = (over: Partial<IoLoggingPolicy> = {}): IoLoggingPolicy => ({
  enabled: true,
  samplingRate: 1,
  apiKeyIds: null,
  ...over,
});

describe("logsContent: which generations IO logging keeps", () => {
  it("off keeps none; on with rate 1 and no key list keeps every key's", () => {
    expect(logsContent(io({ enabled: false }), "ws", 1, null, "gen-a")).toBe(false);
    expect(logsContent(io(), "ws", null, null, "gen-a")).toBe(true);
  });

  it("a key list keeps only the listed keys' (an unknown key: none; [] keeps none)", () => {
    expect(logsContent(io({ apiKeyIds: [] }), "ws", 5, null, "gen-a")).toBe(false);
    expect(logsContent(io({ apiKeyIds: [3, 5] }), "ws", 5, null, "gen-a")).toBe(true);
    expect(logsContent(io({ apiKeyIds: [3, 5] }), "ws", 4, null, "gen-a")).toBe(false);
    expect(logsContent(io({ apiKeyIds: [3, 5] }), "ws", null, null, "gen-a")).toBe(false);
  });

  it("sampling: 0 keeps none; a rate keeps about its share, by session when there is one", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `gen-${i}`);
    expect(ids.filter((id) => logsContent(io({ samplingRate: 0 }), "ws", null, null, id))).toEqual([]);
    const kept = ids.filter((id) => logsContent(io({ samplingRate: 0.25 }), "ws", null, null, id)).length;
    expect(kept).toBeGreaterThan(400);
    expect(kept).toBeLessThan(600);
    // One session: every generation decided alike.
    const decisions = new Set(
      ids.map((id) => logsContent(io({ samplingRate: 0.5 }), "ws", null, "sess", id)),
    );
    expect(decisions.size).toBe(1);
  });
});

const live = (over: Partial<LiveContext> = {}): LiveContext => ({
  input: [{ role: "user", content: "hi" }],
  output: "Echo: hi",
  params: null,
  trace: null,
  attempts: [],
  appTitle: null,
  referer: null,
  sessionId: null,
  promptCostUsd: null,
  completionCostUsd: null,
  ...over,
});
const origin = { keyHash: "k".repeat(64), workspaceId: "ws-1", createdAt: new Date("2026-11-18T12:00:00Z") };
const WS = { id: "ws-1", organizationId: "org-1" };

function policyOf(ws: WorkspacePolicy | Error, key: KeyPolicy | null = null) {
  return {
    workspace: async () => {
      if (ws instanceof Error) throw ws;
      return ws;
    },
    keyByHash: async () => key,
  };
}

describe("ContentLogger", () => {
  it("stores nothing, and reads no key, for a workspace with IO logging off", async () => {
    const store = await openSqliteStore(":memory:");
    let keyReads = 0;
    const logger = new ContentLogger({
      db: store.db,
      policy: { ...policyOf(workspacePolicy(WS)), keyByHash: async () => (keyReads++, null) },
      secretBox: new SecretBox(Buffer.alloc(32, 1)),
    });
    logger.onLive("org-1", "gen-1", live(), origin);
    await logger.idle();
    expect(await store.db.selectFrom("generation_content").selectAll().execute()).toEqual([]);
    expect(keyReads).toBe(0);
    await store.close();
  });

  it("never throws to the recording: a failing policy or store is reported to the listeners", async () => {
    const failures: string[] = [];
    const brokenDb = {
      insertInto: () => {
        throw new Error("store down");
      },
    } as unknown as Db;
    const on = workspacePolicy(WS, { ioLogging: io() });
    const loggers = [
      new ContentLogger({
        db: brokenDb,
        policy: policyOf(new Error("policy down")),
        secretBox: new SecretBox(Buffer.alloc(32, 1)),
      }),
      new ContentLogger({
        db: brokenDb,
        policy: policyOf(on),
        secretBox: new SecretBox(Buffer.alloc(32, 1)),
      }),
    ];
    for (const [i, logger] of loggers.entries()) {
      logger.onFailure(() => {
        throw new Error("a listener's own failure goes nowhere");
      });
      logger.onFailure((err, id) => failures.push(`${id}: ${(err as Error).message}`));
      expect(() => logger.onLive("org-1", `gen-${i}`, live(), origin)).not.toThrow();
      await logger.idle();
    }
    expect(failures).toEqual(["gen-0: policy down", "gen-1: store down"]);
  });

  it("a listed key is looked up by hash; the record then names the key and workspace", async () => {
    const store = await openSqliteStore(":memory:");
    const ws = workspacePolicy(WS, { ioLogging: io({ apiKeyIds: [7] }) });
    const logger = new ContentLogger({
      db: store.db,
      policy: policyOf(ws, keyPolicy(ws, origin.keyHash, { id: 7 })),
      secretBox: new SecretBox(Buffer.alloc(32, 1)),
    });
    logger.onLive("org-1", "gen-1", live(), origin);
    await logger.idle();
    const rows = await store.db.selectFrom("generation_content").selectAll().execute();
    expect(rows.map((r) => [r.organization_id, r.id, r.workspace_id, r.key_hash, r.created_at])).toEqual([
      ["org-1", "gen-1", "ws-1", origin.keyHash, "2026-11-18T12:00:00.000Z"],
    ]);
    await store.close();
  });
});

describe("startContentSweep", () => {
  it("sweeps at once and every interval, reports a failure and keeps going; stop ends it", async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const db = {
      deleteFrom: () => ({
        where: () => ({
          executeTakeFirst: async () => {
            calls++;
            if (calls === 1) throw new Error("store down");
            return { numDeletedRows: 0n };
          },
        }),
      }),
    } as unknown as Db;
    const sweep = startContentSweep({
      db,
      clock: new ManualClock(new Date("2026-11-18T12:00:00Z")),
      retentionMs: 1000,
      intervalMs: 20,
      onError: (err) => errors.push(err),
    });
    await new Promise((r) => setTimeout(r, 110));
    await sweep.stop();
    const after = calls;
    expect(after).toBeGreaterThanOrEqual(3);
    expect(errors).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 60));
    expect(calls).toBe(after);
  });
});
