import { afterAll, describe, expect, it } from "vitest";
import { authenticate } from "../../src/domain/auth/authenticate.js";
import { readThroughPolicy } from "../../src/domain/policy/read-through.js";
import { bootstrap } from "../../src/domain/organizations/bootstrap.js";
import { ManualClock } from "../../src/lib/clock.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { PG_SKIP_REASON, PG_URL, freshPostgresDatabase } from "../helpers/stores.js";

/**
 * Instances that start together on one empty database each run bootstrap. Without a lock shared
 * by every instance, each sees no organization and creates its own (and prints its own key).
 */
const clock = new ManualClock(new Date("2026-11-18T12:00:00.000Z"));
const INSTANCES = 4;

async function count(store: RecordStore, table: "organizations" | "api_keys"): Promise<number> {
  const row = await store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe.skipIf(!PG_URL)("bootstrap race: instances on one empty PostgreSQL database", () => {
  if (!PG_URL) console.warn(PG_SKIP_REASON);
  const drops: (() => Promise<void>)[] = [];
  const stores: RecordStore[] = [];
  afterAll(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of drops.splice(0)) await d();
  });

  /** One pool per "instance", as separate processes would have; migrations race too. */
  async function instances(): Promise<RecordStore[]> {
    const db = await freshPostgresDatabase();
    drops.push(db.drop);
    const opened = await Promise.all(Array.from({ length: INSTANCES }, () => openPostgresStore(db.url, 3)));
    stores.push(...opened);
    return opened;
  }

  it.each([1, 2, 3, 4, 5])(
    "without a bootstrap key: one organization, one printed key (round %i)",
    async () => {
      const all = await instances();
      const results = await Promise.all(all.map((s) => bootstrap(s, clock, null)));
      expect(await count(all[0]!, "organizations")).toBe(1);
      expect(await count(all[0]!, "api_keys")).toBe(1);
      const printed = results.map((r) => r.generatedKey).filter((k) => k !== null);
      expect(printed).toHaveLength(1);
      expect(new Set(results.map((r) => r.organizationId)).size).toBe(1);
      for (const s of all) {
        const p = await authenticate(readThroughPolicy(s.db), clock, `Bearer ${printed[0]}`);
        expect(p.isManagement).toBe(true);
      }
    },
  );

  it("with one bootstrap key: one organization and the key works through every instance", async () => {
    const all = await instances();
    const key = `operator-bootstrap-key-${"r".repeat(24)}`;
    const results = await Promise.all(all.map((s) => bootstrap(s, clock, key)));
    expect(results.every((r) => r.generatedKey === null)).toBe(true);
    expect(await count(all[0]!, "organizations")).toBe(1);
    expect(await count(all[0]!, "api_keys")).toBe(1);
    for (const s of all)
      expect((await authenticate(readThroughPolicy(s.db), clock, `Bearer ${key}`)).isManagement).toBe(true);
  });

  it("the lock is released when the work fails, and is held by one caller at a time", async () => {
    const [a, b] = await instances();
    await expect(a!.exclusive("gatehouse:test", () => Promise.reject(new Error("boom")))).rejects.toThrow(
      "boom",
    );
    let inside = 0;
    let most = 0;
    const work = (s: RecordStore) =>
      s.exclusive("gatehouse:test", async () => {
        inside++;
        most = Math.max(most, inside);
        await new Promise((r) => setTimeout(r, 20));
        inside--;
      });
    await Promise.all([work(a!), work(b!), work(a!), work(b!)]);
    expect(most).toBe(1);
  });
});

describe("bootstrap on embedded SQLite: concurrent calls in one process", () => {
  it("create one organization", async () => {
    const s = await openSqliteStore(":memory:");
    try {
      const results = await Promise.all([1, 2, 3].map(() => bootstrap(s, clock, null)));
      expect(results.filter((r) => r.generatedKey !== null)).toHaveLength(1);
      expect(await count(s, "organizations")).toBe(1);
    } finally {
      await s.close();
    }
  });
});
