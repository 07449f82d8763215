import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { LOOKUP_QUEUE_FULL, PolicyCache, type PolicyLoader } from "../../src/domain/policy/policy-cache.js";
import type { PolicyChannel, PolicyChannelHandlers } from "../../src/stores/policy-channel.js";
import { recordStoreLoader } from "../../src/domain/policy/policy-loader.js";
import { hashKey } from "../../src/lib/ids.js";
import { systemClock } from "../../src/lib/clock.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";

/** The real loader on a real SQLite store, counting how often each kind reaches the store. */
function countingLoader(store: RecordStore) {
  const real = recordStoreLoader(store.db);
  const calls = { key: 0, workspace: 0, ref: 0, guardrails: 0 };
  const loader: PolicyLoader = {
    key: (h) => (calls.key++, real.key(h)),
    workspace: (id) => (calls.workspace++, real.workspace(id)),
    workspaceIdByRef: (o, r) => (calls.ref++, real.workspaceIdByRef(o, r)),
    guardrails: (o) => (calls.guardrails++, real.guardrails(o)),
  };
  return { loader, calls };
}

/**
 * The real loader, whose first `kind` lookup reads the store and then waits for `release()` before
 * answering: a read of the old row that ends after a change has committed.
 */
function gatedLoader(store: RecordStore, kind: "key" | "workspace") {
  let release!: () => void;
  const gate = new Promise<void>((go) => (release = go));
  const real = recordStoreLoader(store.db);
  const calls = { n: 0 };
  const gated =
    <A, R>(load: (a: A) => Promise<R>) =>
    async (a: A): Promise<R> => {
      calls.n++;
      const first = calls.n === 1;
      const r = await load(a);
      if (first) await gate;
      return r;
    };
  const loader: PolicyLoader =
    kind === "key" ? { ...real, key: gated(real.key) } : { ...real, workspace: gated(real.workspace) };
  return { loader, real, calls, release };
}

/** A channel driven by the test. */
function manualChannel(): PolicyChannel & { h: () => PolicyChannelHandlers } {
  let handlers: PolicyChannelHandlers | null = null;
  return {
    subscribe: (h) => void (handlers = h),
    close: async () => undefined,
    h: () => handlers!,
  };
}

describe("policy cache (src/domain/policy/policy-cache.ts) on SQLite", () => {
  let store: RecordStore;
  let org: Awaited<ReturnType<typeof createOrganization>>;
  let hash: string;
  let now = 0;
  const clock = () => now;

  beforeEach(async () => {
    store = await openSqliteStore(":memory:");
    org = await createOrganization(store, systemClock, "Policy org");
    hash = hashKey(org.managementKey);
    now = 0;
  });
  afterEach(async () => store.close());

  const disable = () =>
    store.db.updateTable("api_keys").set({ disabled: 1 }).where("hash", "=", hash).execute();

  it("answers a known key from memory after the first lookup, and sees a change at once after keyChanged", async () => {
    const { loader, calls } = countingLoader(store);
    const cache = new PolicyCache(loader, { channel: null, now: clock });
    const first = await cache.keyByHash(hash);
    expect(first).toMatchObject({
      hash,
      organizationId: org.organizationId,
      isManagement: true,
      disabled: false,
    });
    for (let i = 0; i < 50; i++) await cache.keyByHash(hash);
    expect(calls.key).toBe(1);
    await disable();
    // Not told: still the remembered answer (this is what keyChanged is for).
    expect((await cache.keyByHash(hash))!.disabled).toBe(false);
    cache.keyChanged(hash);
    expect((await cache.keyByHash(hash))!.disabled).toBe(true);
    expect(calls.key).toBe(2);
  });

  it("knownKey answers synchronously what keyByHash would answer from memory, and nothing else", async () => {
    const { loader, calls } = countingLoader(store);
    const cache = new PolicyCache(loader, { channel: null, now: clock, positiveTtlMs: 1_000 });
    expect(cache.knownKey(hash)).toBeUndefined(); // never looked up: keyByHash must read
    const looked = await cache.keyByHash(hash);
    expect(cache.knownKey(hash)).toBe(looked);
    expect(calls.key).toBe(1);
    cache.keyChanged(hash);
    expect(cache.knownKey(hash)).toBeUndefined();
    await cache.keyByHash(hash);
    now = 1_000; // past the entry's lifetime: keyByHash would read again
    expect(cache.knownKey(hash)).toBeUndefined();
    // An unknown key is remembered as none (null), as keyByHash answers it.
    const unknown = hashKey("sk-gh-v1-" + "0".repeat(64));
    expect(await cache.keyByHash(unknown)).toBeNull();
    expect(cache.knownKey(unknown)).toBeNull();
  });

  it("many concurrent lookups of one uncached hash reach the store once", async () => {
    const { loader, calls } = countingLoader(store);
    const cache = new PolicyCache(loader, { channel: null, now: clock });
    const all = await Promise.all(Array.from({ length: 100 }, () => cache.keyByHash(hash)));
    expect(new Set(all.map((k) => k!.id)).size).toBe(1);
    expect(calls.key).toBe(1);
  });

  it("a lookup that read the old row before an invalidation is answered but not cached", async () => {
    // The old row is read, then the change commits.
    const { loader, calls, release } = gatedLoader(store, "key");
    const cache = new PolicyCache(loader, { channel: null, now: clock });
    const stale = cache.keyByHash(hash);
    await new Promise((r) => setTimeout(r, 10));
    await disable();
    cache.keyChanged(hash);
    release();
    expect((await stale)!.disabled).toBe(false);
    expect((await cache.keyByHash(hash))!.disabled).toBe(true);
    expect(calls.n).toBe(2);
  });

  it("a lookup made after an invalidation does not join one that read the old row before it", async () => {
    // The old row is read, then the change commits.
    const { loader, calls, release } = gatedLoader(store, "key");
    const cache = new PolicyCache(loader, { channel: null, now: clock });
    const stale = cache.keyByHash(hash);
    await new Promise((r) => setTimeout(r, 10));
    await disable();
    cache.keyChanged(hash);
    // The next request after the PATCH: it must see the disabled key, not the lookup in flight.
    const next = cache.keyByHash(hash);
    release();
    expect((await stale)!.disabled).toBe(false);
    expect((await next)!.disabled).toBe(true);
    expect(calls.n).toBe(2);
    // The stale lookup ending after the fresh one started must not end the fresh one's dedup.
    expect((await cache.keyByHash(hash))!.disabled).toBe(true);
  });

  it("the same for a workspace: a budget change is seen by the next lookup, not a stale one in flight", async () => {
    const { loader, real, calls, release } = gatedLoader(store, "workspace");
    const cache = new PolicyCache(loader, { channel: null, now: clock });
    const key = await real.key(hash);
    const wsId = key!.workspaceId;
    const stale = cache.workspace(wsId);
    await new Promise((r) => setTimeout(r, 10));
    await store.db
      .updateTable("workspaces")
      .set({ include_byok_in_budgets: 1 })
      .where("id", "=", wsId)
      .execute();
    cache.workspaceChanged(wsId);
    const next = cache.workspace(wsId);
    release();
    expect((await stale)!.includeByokInBudgets).toBe(false);
    expect((await next)!.includeByokInBudgets).toBe(true);
    expect(calls.n).toBe(2);
  });

  it("remembers an unknown hash for negativeTtlMs only; keyChanged (key created here) ends it at once", async () => {
    const { loader, calls } = countingLoader(store);
    const cache = new PolicyCache(loader, { channel: null, negativeTtlMs: 1_000, now: clock });
    const unknown = hashKey("sk-gh-v1-not-a-key");
    expect(await cache.keyByHash(unknown)).toBeNull();
    expect(await cache.keyByHash(unknown)).toBeNull();
    expect(calls.key).toBe(1);
    now = 1_001;
    expect(await cache.keyByHash(unknown)).toBeNull();
    expect(calls.key).toBe(2);
    cache.keyChanged(unknown);
    expect(await cache.keyByHash(unknown)).toBeNull();
    expect(calls.key).toBe(3);
  });

  it("an unknown-key flood: at most maxConcurrentLoads store lookups at once, the overflow refused with 429", async () => {
    let running = 0;
    let peak = 0;
    let calls = 0;
    const slow: PolicyLoader = {
      ...recordStoreLoader(store.db),
      key: async () => {
        calls++;
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        return null;
      },
    };
    const cache = new PolicyCache(slow, {
      channel: null,
      maxConcurrentLoads: 2,
      maxQueuedLoads: 3,
      now: clock,
    });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => cache.keyByHash(hashKey(`sk-gh-v1-flood-${i}`))),
    );
    expect(peak).toBe(2);
    expect(calls).toBe(5);
    const refused = results.filter((r) => r.status === "rejected");
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.reason).toMatchObject({ status: 429, message: LOOKUP_QUEUE_FULL });
    }
    // A known key is unaffected once cached; the queue drains and later lookups run.
    expect(await cache.keyByHash(hashKey("sk-gh-v1-after"))).toBeNull();
  });

  it("workspace policy: budgets in nano-USD and the BYOK flag, by id and by reference; workspaceChanged refreshes", async () => {
    const { loader, calls } = countingLoader(store);
    const cache = new PolicyCache(loader, { channel: null, now: clock });
    await store.db
      .insertInto("budgets")
      .values({
        id: "b1",
        workspace_id: org.workspaceId,
        reset_interval: "monthly",
        limit_nano: 5_000_000_000n,
        created_at: "2026-01-01T00:00:00.000Z",
        updated_at: "2026-01-01T00:00:00.000Z",
      })
      .execute();
    const ws = await cache.workspaceByRef(org.organizationId, "default");
    expect(ws).toMatchObject({
      id: org.workspaceId,
      includeByokInBudgets: false,
      budgets: [{ interval: "monthly", limitNano: 5_000_000_000n }],
    });
    expect(await cache.workspace(org.workspaceId)).toBe(ws);
    await cache.workspaceByRef(org.organizationId, "default");
    expect(calls).toMatchObject({ ref: 1, workspace: 1 });
    await store.db.updateTable("workspaces").set({ include_byok_in_budgets: 1 }).execute();
    cache.workspaceChanged(org.workspaceId);
    expect((await cache.workspace(org.workspaceId))!.includeByokInBudgets).toBe(true);
    expect(await cache.workspaceByRef(org.organizationId, "no-such-slug")).toBeNull();
  });

  it("caches nothing until the change channel is up, and drops everything when it is lost", async () => {
    const channel = manualChannel();
    const { loader, calls } = countingLoader(store);
    const cache = new PolicyCache(loader, { channel, now: clock });
    await cache.keyByHash(hash);
    await cache.keyByHash(hash);
    expect(calls.key).toBe(2); // not listening yet: read through
    channel.h().up();
    await cache.keyByHash(hash);
    await cache.keyByHash(hash);
    expect(calls.key).toBe(3);
    // A change announced by another instance.
    await disable();
    channel.h().change({ kind: "key", id: hash });
    expect((await cache.keyByHash(hash))!.disabled).toBe(true);
    expect(calls.key).toBe(4);
    // Lost: notifications may be missed, so nothing is trusted or kept until it is back.
    channel.h().down();
    expect(cache.caching).toBe(false);
    await store.db.updateTable("api_keys").set({ disabled: 0 }).where("hash", "=", hash).execute();
    expect((await cache.keyByHash(hash))!.disabled).toBe(false);
    await cache.keyByHash(hash);
    expect(calls.key).toBe(6);
    channel.h().up();
    await cache.keyByHash(hash);
    await cache.keyByHash(hash);
    expect(calls.key).toBe(7);
  });
});
