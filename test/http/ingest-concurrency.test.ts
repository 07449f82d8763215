import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestGenerations } from "../../src/domain/ingest/ingest-generations.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { readUsage } from "../../src/domain/usage/ledger.js";
import { hashKey } from "../../src/lib/ids.js";
import { ManualClock } from "../../src/lib/clock.js";
import type { ActivityStore } from "../../src/stores/activity-store.js";
import { openDuckDbActivityStore } from "../../src/stores/duckdb/duckdb-store.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { wireGeneration } from "../helpers/wire-generations.js";

/*
 * Many batches at once on the embedded store, where concurrent batches are written together
 * (group commit): each id is accepted exactly once whichever batch carries it, every batch gets
 * its own count, and the ledger, the activity rows and the answers agree.
 */

const clock = new ManualClock(new Date("2026-11-18T12:00:00.000Z"));

function record(id: string, keyHash: string, usageNano: number): Record<string, unknown> {
  return wireGeneration({
    id,
    created_at: "2026-11-18T11:00:00Z",
    api_key_hash: keyHash,
    usage: usageNano / 1e9,
    latency_ms: 1,
    classifications: [
      { classifier_id: "11111111-1111-4111-8111-111111111111", dimension_name: "topic", value: id },
    ],
  });
}

describe("concurrent batches on the embedded store", () => {
  let store: RecordStore;
  let activity: ActivityStore;
  const orgs: { id: string; hash: string }[] = [];

  beforeAll(async () => {
    store = await openSqliteStore(":memory:");
    activity = await openDuckDbActivityStore({ path: ":memory:" });
    for (const name of ["A", "B"]) {
      const o = await createOrganization(store, clock, name);
      orgs.push({ id: o.organizationId, hash: hashKey(o.managementKey) });
    }
  });
  afterAll(async () => {
    await store.close();
    await activity.close();
  });

  it("accepts each id once across overlapping batches of two organizations sent together", async () => {
    // 24 batches of 50 ids drawn from 400 per organization: many ids are in several batches.
    const batches = Array.from({ length: 24 }, (_, b) => {
      const org = orgs[b % 2] as { id: string; hash: string };
      const ids = Array.from({ length: 50 }, (_, i) => `g-${(b * 37 + i * 11) % 400}`);
      return { org, records: ids.map((id) => record(id, org.hash, 1 + Number(id.slice(2)))) };
    });
    const answers = await Promise.all(
      batches.map((b) => ingestGenerations({ store, activity, clock }, b.org.id, b.records)),
    );
    for (const [i, a] of answers.entries()) {
      expect(a.accepted + a.duplicates, `batch ${i}`).toBe(50);
    }
    for (const org of orgs) {
      const mine = batches.filter((b) => b.org === org);
      const distinct = new Set(mine.flatMap((b) => b.records.map((r) => r.id as string)));
      const accepted = answers.filter((_a, i) => batches[i]?.org === org).reduce((n, a) => n + a.accepted, 0);
      expect(accepted).toBe(distinct.size);

      const rows = await activity.query(
        {
          sql: `SELECT count(*) AS n, count(DISTINCT id) AS d, sum(usage_nano) AS usage,
                  (SELECT count(*) FROM generation_tags WHERE organization_id = $org) AS tags
                FROM generations WHERE organization_id = $org`,
          params: { org: org.id },
        },
        { timeoutMs: 10_000 },
      );
      const expectedUsage = [...distinct].reduce((n, id) => n + 1 + Number(id.slice(2)), 0);
      expect(rows[0]).toEqual({
        n: BigInt(distinct.size),
        d: BigInt(distinct.size),
        usage: BigInt(expectedUsage),
        tags: BigInt(distinct.size),
      });
      const ledger = await readUsage(store.db, "key", [org.hash], clock.now());
      expect(ledger.get(org.hash)?.all.usage).toBe(BigInt(expectedUsage));
    }
  });
});
