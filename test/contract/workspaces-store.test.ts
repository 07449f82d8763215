import { describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { requireDefaultWorkspace, resolveWorkspace } from "../../src/domain/workspaces/resolve-workspace.js";
import { newId } from "../../src/lib/ids.js";
import { useAppOnStore } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`workspaces on ${f.name}`, () => {
    const env = useAppOnStore(f);

    const create = (slug: string, extra: Record<string, unknown> = {}) =>
      env.t.call({ method: "POST", url: "/api/v1/workspaces", payload: { name: slug, slug, ...extra } });

    it("round-trips every setting through the store", async () => {
      const payload = {
        description: "d",
        default_text_model: "a/b",
        default_image_model: "c/d",
        default_provider_sort: "exacto",
        disabled_server_tools: ["openrouter:web_fetch"],
        io_logging_api_key_ids: [7, 9],
        io_logging_sampling_rate: 0.125,
        is_data_discount_logging_enabled: true,
        is_observability_broadcast_enabled: false,
        is_observability_io_logging_enabled: true,
      };
      const res = await create("roundtrip", payload);
      expect(res.statusCode).toBe(201);
      const read = await env.t.call({ method: "GET", url: "/api/v1/workspaces/roundtrip" });
      expect(read.json().data).toMatchObject(payload);
      expect(read.json().data).toEqual(res.json().data);
    });

    it("concurrent creates with one slug: exactly one wins, the others get 409", async () => {
      for (let round = 0; round < 10; round++) {
        const slug = `race-${round}`;
        const results = await Promise.all([create(slug), create(slug), create(slug)]);
        expect(results.map((r) => r.statusCode).sort(), `round ${round}`).toEqual([201, 409, 409]);
      }
    });

    it("resolves by id and slug within the organization only", async () => {
      const other = await createOrganization(env.store, env.t.clock, "Other");
      const ws = (await create("resolve-me")).json().data;
      expect((await resolveWorkspace(env.store.db, env.t.organizationId, ws.id)).id).toBe(ws.id);
      expect((await resolveWorkspace(env.store.db, env.t.organizationId, "resolve-me")).id).toBe(ws.id);
      await expect(resolveWorkspace(env.store.db, other.organizationId, ws.id)).rejects.toMatchObject({
        status: 404,
      });
      await expect(resolveWorkspace(env.store.db, other.organizationId, "resolve-me")).rejects.toMatchObject({
        status: 404,
      });
      await expect(resolveWorkspace(env.store.db, env.t.organizationId, newId())).rejects.toMatchObject({
        message: "Workspace not found",
      });
      const locked = await env.store.transaction((trx) =>
        resolveWorkspace(trx, env.t.organizationId, ws.id, { forUpdate: env.store.caps.supportsForUpdate }),
      );
      expect(locked.id).toBe(ws.id);
      expect((await requireDefaultWorkspace(env.store.db, env.t.organizationId)).id).toBe(env.t.workspaceId);
    });

    it("delete cascades in one transaction", async () => {
      const ws = (await create("cascade")).json().data;
      await env.t.call({
        method: "PUT",
        url: "/api/v1/workspaces/cascade/budgets/daily",
        payload: { limit_usd: 1 },
      });
      const res = await env.t.call({ method: "DELETE", url: "/api/v1/workspaces/cascade" });
      expect(res.json()).toEqual({ deleted: true });
      const budgets = await env.store.db
        .selectFrom("budgets")
        .select("id")
        .where("workspace_id", "=", ws.id)
        .execute();
      expect(budgets).toEqual([]);
      expect((await create("cascade")).statusCode).toBe(201);
    });
  });
}
