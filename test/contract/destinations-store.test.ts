import { describe, expect, it } from "vitest";
import { findDestination } from "../../src/domain/destinations/destination-repo.js";
import { openConfig } from "../../src/domain/destinations/destination-record.js";
import { DESTINATION_TYPE_NAMES } from "../../src/domain/destinations/destination-types.js";
import { useAppOnStore } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";
import { createBody, SAMPLE_CONFIGS, secretsOf } from "../http/destinations-fixtures.js";

const BASE = "/api/v1/observability/destinations";

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`observability destinations on ${f.name}`, () => {
    const env = useAppOnStore(f);

    it("round-trips every field and type; secrets are only in the ciphertext", async () => {
      for (const type of DESTINATION_TYPE_NAMES) {
        const res = await env.t.call({
          method: "POST",
          url: BASE,
          payload: createBody(type, {
            sampling_rate: 0.125,
            privacy_mode: true,
            regions: ["us", "eu"],
            filter_rules: {
              groups: [{ logic: "or", rules: [{ field: "total_tokens", operator: "gte", value: 10 }] }],
            },
          }),
        });
        expect(res.statusCode, type).toBe(201);
        const got = (await env.t.call({ method: "GET", url: `${BASE}/${res.json().data.id}` })).json().data;
        expect(got).toEqual(res.json().data);
        expect(got).toMatchObject({
          sampling_rate: 0.125,
          privacy_mode: true,
          enabled: true,
          regions: ["us", "europe"],
        });
        const row = await findDestination(env.store.db, env.t.organizationId, got.id);
        for (const secret of secretsOf(type, SAMPLE_CONFIGS[type])) {
          expect(row!.config_ciphertext).not.toContain(secret);
          expect(JSON.stringify(got)).not.toContain(secret);
        }
        expect(openConfig(env.t.ctx.secretBox, row!)).toMatchObject(SAMPLE_CONFIGS[type]);
      }
      const list = (await env.t.call({ method: "GET", url: `${BASE}?limit=100` })).json();
      expect(list.total_count).toBe(DESTINATION_TYPE_NAMES.length);
    });

    it("PATCH echoing masked values keeps the stored secrets; a new value replaces", async () => {
      const created = (await env.t.call({ method: "POST", url: BASE, payload: createBody("s3") })).json()
        .data;
      const echoed = await env.t.call({
        method: "PATCH",
        url: `${BASE}/${created.id}`,
        payload: { config: { ...created.config, region: "eu-west-1" }, enabled: false },
      });
      expect(echoed.statusCode).toBe(200);
      let config = openConfig(
        env.t.ctx.secretBox,
        (await findDestination(env.store.db, env.t.organizationId, created.id))!,
      );
      expect(config).toMatchObject({ ...SAMPLE_CONFIGS.s3, region: "eu-west-1" });
      await env.t.call({
        method: "PATCH",
        url: `${BASE}/${created.id}`,
        payload: { config: { sessionToken: null } },
      });
      config = openConfig(
        env.t.ctx.secretBox,
        (await findDestination(env.store.db, env.t.organizationId, created.id))!,
      );
      expect(config).not.toHaveProperty("sessionToken");
      expect(config.secretAccessKey).toBe(SAMPLE_CONFIGS.s3.secretAccessKey);
    });

    /** Soft-deletes every live destination of a type, so the workspace starts at 0 of it. */
    const clearType = async (type: string) => {
      const list = (await env.t.call({ method: "GET", url: `${BASE}?limit=100` })).json().data as {
        id: string;
        type: string;
      }[];
      for (const d of list.filter((x) => x.type === type)) {
        expect((await env.t.call({ method: "DELETE", url: `${BASE}/${d.id}` })).statusCode).toBe(200);
      }
    };
    const liveOf = async (type: string) => {
      const row = await env.store.db
        .selectFrom("destinations")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("type", "=", type)
        .where("deleted_at", "is", null)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    const concurrentCreates = (type: (typeof DESTINATION_TYPE_NAMES)[number], n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          env.t.call({ method: "POST", url: BASE, payload: { ...createBody(type), name: `${type} ${i}` } }),
        ),
      );

    it("6 concurrent creates when 0 exist: exactly 5 succeed, the sixth is 409", async () => {
      for (const type of ["grafana", "weave", "opik"] as const) {
        await clearType(type);
        const codes = (await concurrentCreates(type, 6)).map((r) => r.statusCode).sort();
        expect(codes, type).toEqual([201, 201, 201, 201, 201, 409]);
        expect(await liveOf(type)).toBe(5);
      }
    });

    it("12 concurrent creates when 0 exist: exactly 5 land", async () => {
      await clearType("webhook");
      const results = await concurrentCreates("webhook", 12);
      expect(results.filter((r) => r.statusCode === 201)).toHaveLength(5);
      expect(results.filter((r) => r.statusCode === 409)).toHaveLength(7);
      expect(await liveOf("webhook")).toBe(5);
    });
  });
}
