import { describe, expect, it } from "vitest";
import { useAppOnStore } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`concurrent PATCH /keys/{hash} on ${f.name}`, () => {
    const env = useAppOnStore(f);

    it("two PATCHes of different fields of one key both survive", async () => {
      const created = await env.t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "start" } });
      const hash: string = created.json().data.hash;
      const patch = (payload: object) =>
        env.t.call({ method: "PATCH", url: `/api/v1/keys/${hash}`, payload });
      for (let round = 1; round <= 25; round++) {
        const results = await Promise.all([
          patch({ name: `name-${round}` }),
          patch({ limit: round }),
          patch({ limit_reset: round % 2 ? "daily" : "weekly" }),
          patch({ include_byok_in_limit: round % 2 === 1 }),
        ]);
        expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
        const now = (await env.t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data;
        expect(now).toMatchObject({
          name: `name-${round}`,
          limit: round,
          limit_reset: round % 2 ? "daily" : "weekly",
          include_byok_in_limit: round % 2 === 1,
          disabled: false,
        });
      }
    });
  });
}
