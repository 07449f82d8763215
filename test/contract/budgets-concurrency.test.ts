import { beforeEach, describe, expect, it } from "vitest";
import { useAppOnStore } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

const ROUNDS = 25;
const ORDER = ["daily", "weekly", "monthly", "lifetime"] as const;

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`budget ordering under concurrency on ${f.name}`, () => {
    const env = useAppOnStore(f);
    beforeEach(async () => {
      await env.store.db.deleteFrom("budgets").execute();
    });

    const put = (interval: string, limit_usd: number, ref = "default") =>
      env.t.call({
        method: "PUT",
        url: `/api/v1/workspaces/${ref}/budgets/${interval}`,
        payload: { limit_usd },
      });
    const stored = async () =>
      (await env.store.db.selectFrom("budgets").select(["reset_interval", "limit_nano"]).execute()).map(
        (r) => ({
          interval: r.reset_interval,
          limit: BigInt(r.limit_nano),
        }),
      );
    const assertOrdered = (rows: { interval: string; limit: bigint }[]) => {
      const by = new Map(rows.map((r) => [r.interval, r.limit]));
      const present = ORDER.filter((i) => by.has(i));
      for (let a = 0; a < present.length; a++) {
        for (let b = a + 1; b < present.length; b++) {
          expect(by.get(present[a]!)! < by.get(present[b]!)!, `${present[a]} < ${present[b]}`).toBe(true);
        }
      }
    };

    it(`two PUTs valid alone but not together: exactly one wins (${ROUNDS} rounds)`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        await env.store.db.deleteFrom("budgets").execute();
        const [a, b] = await Promise.all([put("daily", 100), put("weekly", 50)]);
        const codes = [a.statusCode, b.statusCode].sort();
        expect(codes, `round ${round}`).toEqual([200, 400]);
        const rows = await stored();
        expect(rows).toHaveLength(1);
        const winner = a.statusCode === 200 ? "daily" : "weekly";
        expect(rows[0]!.interval).toBe(winner);
        const loser = a.statusCode === 200 ? b : a;
        expect(loser.json().error.message).toContain(`the ${winner} budget`);
      }
    });

    it(`three pairwise-conflicting PUTs: exactly one wins (${ROUNDS} rounds)`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        await env.store.db.deleteFrom("budgets").execute();
        const results = await Promise.all([put("daily", 100), put("weekly", 50), put("lifetime", 10)]);
        expect(
          results.filter((r) => r.statusCode === 200),
          `round ${round}`,
        ).toHaveLength(1);
        expect(results.filter((r) => r.statusCode === 400)).toHaveLength(2);
        expect(await stored()).toHaveLength(1);
      }
    });

    it(`many random concurrent PUTs always leave a strictly ordered set (${ROUNDS} rounds)`, async () => {
      let seed = 42;
      const rand = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      for (let round = 0; round < ROUNDS; round++) {
        await env.store.db.deleteFrom("budgets").execute();
        const reqs = Array.from({ length: 8 }, () =>
          put(ORDER[Math.floor(rand() * 4)]!, 1 + Math.floor(rand() * 100)),
        );
        const results = await Promise.all(reqs);
        for (const r of results) expect([200, 400]).toContain(r.statusCode);
        expect(results.some((r) => r.statusCode === 200)).toBe(true);
        assertOrdered(await stored());
      }
    });

    it(`a workspace deleted while a budget is being put keeps no budget (${ROUNDS} rounds)`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const slug = `ws-${round}`;
        const created = await env.t.call({
          method: "POST",
          url: "/api/v1/workspaces",
          payload: { name: slug, slug },
        });
        const id = created.json().data.id as string;
        const [p, d] = await Promise.all([
          put("monthly", 10, slug),
          env.t.call({ method: "DELETE", url: `/api/v1/workspaces/${slug}` }),
        ]);
        expect(d.statusCode).toBe(200);
        expect([200, 404]).toContain(p.statusCode);
        const left = await env.store.db
          .selectFrom("budgets")
          .select("id")
          .where("workspace_id", "=", id)
          .execute();
        expect(left).toEqual([]);
      }
    });
  });
}
