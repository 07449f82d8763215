import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  holdActivityStoreLock,
  SplitAnalyticsError,
  type InstanceLock,
  type InstanceLockEvent,
} from "../../src/stores/postgres/instance-lock.js";
import { freshPostgresDatabase, PG_SKIP_REASON, PG_URL } from "../helpers/stores.js";
import { startTcpRelay, type TcpRelay } from "../helpers/tcp-relay.js";
import { waitFor } from "../helpers/broadcast-receiver.js";

/**
 * The activity store's instance lock (src/stores/postgres/instance-lock.ts) outlives its
 * connection: a PostgreSQL restart frees every session lock, and an instance that did not take it
 * again would leave the guard against split analytics off until it restarted.
 */
describe.skipIf(!PG_URL)("the instance lock after its connection is lost", () => {
  if (!PG_URL) console.warn(PG_SKIP_REASON);
  let dbi: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let relay: TcpRelay;
  const locks: InstanceLock[] = [];

  beforeAll(async () => {
    dbi = await freshPostgresDatabase();
    const target = new URL(dbi.url);
    relay = await startTcpRelay(target.hostname, Number(target.port || 5432));
  });
  afterAll(async () => {
    for (const l of locks) await l.release();
    await relay?.close();
    await dbi?.drop();
  });

  it("is taken again on a new connection, so a second embedded instance is still refused", async () => {
    const events: InstanceLockEvent["kind"][] = [];
    const lock = await holdActivityStoreLock(relay.urlThrough(dbi.url), true, {
      retryMs: 20,
      onEvent: (e) => events.push(e.kind),
    });
    locks.push(lock);
    await expect(holdActivityStoreLock(dbi.url, true)).rejects.toBeInstanceOf(SplitAnalyticsError);

    relay.cut();
    await waitFor(() => events.includes("regained"), 5_000, "the lock taken again");
    expect(events.slice(0, 2)).toEqual(["lost", "regained"]);
    expect(lock.held).toBe(true);
    await expect(holdActivityStoreLock(dbi.url, true)).rejects.toBeInstanceOf(SplitAnalyticsError);
  });

  it("reports once that another instance took it meanwhile, and takes it when that one is gone", async () => {
    // The first test's lock is exclusive: let it go, so that this shared one is alone.
    await locks[0]!.release();
    const events: InstanceLockEvent[] = [];
    const lock = await holdActivityStoreLock(relay.urlThrough(dbi.url), false, {
      retryMs: 20,
      maxRetryMs: 40,
      onEvent: (e) => events.push(e),
    });
    locks.push(lock);
    relay.down();
    await waitFor(() => lock.held === false, 5_000, "the lock lost");
    // While its connection is down, an embedded instance (exclusive) starts on the direct URL
    // (once PostgreSQL has seen the old session end and freed its lock).
    let other: InstanceLock | null = null;
    await waitFor(
      async () => {
        other ??= await holdActivityStoreLock(dbi.url, true).catch(() => null);
        return other !== null;
      },
      10_000,
      "the other instance's lock",
    );
    relay.up();
    await waitFor(() => events.some((e) => e.kind === "contested"), 5_000, "the contested event");
    expect(lock.held).toBe(false);
    const contested = events.find((e) => e.kind === "contested");
    expect(contested?.kind === "contested" && contested.message).toMatch(
      /keeps analytics in its own embedded DuckDB/,
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(events.filter((e) => e.kind === "contested")).toHaveLength(1);

    await other!.release();
    await waitFor(() => lock.held, 5_000, "the lock taken back");
    expect(events.map((e) => e.kind).at(-1)).toBe("regained");
  });
});
