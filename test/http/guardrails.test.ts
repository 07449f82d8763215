import { describe, expect, it } from "vitest";
import { useAppOnStore } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";
import { G, defaultGuardrailOf, newKey, ok, refused } from "./guardrails-helpers.js";

/**
 * /guardrails on SQLite and PostgreSQL (docs/guardrails.md): every validation rule is a 400
 * naming the field with nothing stored, the record holds what was written (canonical names),
 * updates replace collections and keep what they leave out, and the workspace default guardrail
 * lives from logical to stored and back.
 */
for (const factory of STORE_FACTORIES) {
  describe.skipIf(factory.skip)(`guardrails (${factory.name})`, () => {
    const env = useAppOnStore(factory);

    it("refuses every invalid field with a 400 naming it, and stores nothing", async () => {
      const { t } = env;
      const cases: [Record<string, unknown>, string | RegExp][] = [
        [{}, "name: is required"],
        [{ name: "" }, "name: at least 1 character"],
        [{ name: "   " }, "name: must not be blank"],
        [{ name: "x".repeat(201) }, "name: at most 200 characters"],
        [{ name: 7 }, "name: must be string"],
        [{ name: "g", description: "d".repeat(1001) }, "description: at most 1000 characters"],
        [{ name: "g", limit_usd: 5 }, "reset_interval: is required with limit_usd"],
        [{ name: "g", reset_interval: "daily" }, "limit_usd: is required with reset_interval"],
        [{ name: "g", limit_usd: 5, reset_interval: null }, "reset_interval: is required with limit_usd"],
        [
          { name: "g", limit_usd: null, reset_interval: "weekly" },
          "limit_usd: is required with reset_interval",
        ],
        [{ name: "g", limit_usd: -1, reset_interval: "daily" }, /^limit_usd: /],
        [{ name: "g", limit_usd: "5", reset_interval: "daily" }, /^limit_usd: must be number/],
        [{ name: "g", limit_usd: 1e10, reset_interval: "daily" }, /^limit_usd: /],
        [{ name: "g", limit_usd: 5, reset_interval: "yearly" }, /^reset_interval: must be one of/],
        [{ name: "g", include_byok_in_budgets: 1 }, "include_byok_in_budgets: must be boolean"],
        [
          { name: "g", allowed_models: ["mock/echo", "nope/model"] },
          "allowed_models[1]: nope/model is not a model this gateway serves (GET /api/v1/models lists them)",
        ],
        [{ name: "g", allowed_models: [] }, "allowed_models: at least 1 item"],
        [{ name: "g", ignored_models: ["gpt-4"] }, /^ignored_models\[0\]: gpt-4 is not a model/],
        [
          { name: "g", allowed_providers: ["openai"] },
          "allowed_providers[0]: openai is not a provider this gateway routes to (GET /api/v1/providers lists them)",
        ],
        [{ name: "g", ignored_providers: [] }, "ignored_providers: at least 1 item"],
        [{ name: "g", allowed_data_regions: [] }, "allowed_data_regions: at least 1 item"],
        [{ name: "g", allowed_data_regions: ["mars"] }, /^allowed_data_regions\[0\]: must be one of/],
        [{ name: "g", enforce_zdr_openai: "yes" }, /^enforce_zdr_openai: must be boolean/],
        [{ name: "g", enable_paid_model_training: 0 }, /^enable_paid_model_training: must be boolean/],
        [
          { name: "g", content_filters: [{ pattern: "", action: "block" }] },
          /^content_filters\[0\]\.pattern: at least 1/,
        ],
        [
          { name: "g", content_filters: [{ pattern: "a", action: "delete" }] },
          /^content_filters\[0\]\.action: must be one of/,
        ],
        [
          { name: "g", content_filters: [{ pattern: "ok", action: "flag", label: "l".repeat(101) }] },
          "content_filters[0].label: at most 100 characters",
        ],
        [{ name: "g", content_filters: [{ action: "flag" }] }, "content_filters[0].pattern: is required"],
        [
          { name: "g", content_filter_builtins: [{ slug: "dna", action: "block" }] },
          /^content_filter_builtins\[0\]\.slug: must be one of/,
        ],
        [
          {
            name: "g",
            content_filter_builtins: [
              { slug: "email", action: "block" },
              { slug: "email", action: "flag" },
            ],
          },
          "content_filter_builtins[1].slug: email is listed twice",
        ],
        [
          {
            name: "g",
            content_filter_builtins: [{ slug: "email", action: "block", scan_scope: "user_only" }],
          },
          "content_filter_builtins[0].scan_scope: applies only to regex-prompt-injection",
        ],
        [
          {
            name: "g",
            content_filter_builtins: [
              { slug: "regex-prompt-injection", action: "block", scan_scope: "system" },
            ],
          },
          /^content_filter_builtins\[0\]\.scan_scope: must be one of/,
        ],
        [{ name: "g", workspace_id: "not-a-uuid" }, "workspace_id: must be a valid uuid"],
        [
          { name: "g", workspace_id: "00000000-0000-4000-8000-000000000000" },
          "workspace_id: no workspace 00000000-0000-4000-8000-000000000000 in this organization",
        ],
      ];
      for (const [body, message] of cases) await refused(t, "POST", G, body, message);
      expect(await ok(t, "GET", G)).toEqual({ data: [], total_count: 0 });
    });

    it("an unsafe pattern is 400 invalid_regex_pattern naming the filter, with the reason", async () => {
      const body = await refused(
        env.t,
        "POST",
        G,
        {
          name: "g",
          content_filters: [
            { pattern: "\\d{16}", action: "block" },
            { pattern: "card", action: "flag" },
            { pattern: "(a+)+$", action: "redact" },
          ],
        },
        /^content_filters\[2\]\.pattern: nests quantifiers: /,
      );
      expect(body.error.metadata).toEqual({
        code: "invalid_regex_pattern",
        field: "content_filters[2].pattern",
      });
      for (const pattern of ["(?=x)y", "(a)\\1", "(a|aa)+", "[", "x*"]) {
        const r = await refused(
          env.t,
          "POST",
          G,
          { name: "g", content_filters: [{ pattern, action: "block" }] },
          /^content_filters\[0\]\.pattern: /,
        );
        expect(r.error.metadata.code, pattern).toBe("invalid_regex_pattern");
      }
      expect((await ok(env.t, "GET", G)).total_count).toBe(0);
    });

    it("creates with every field: canonical names, the system's labels, the budget exact", async () => {
      const { t } = env;
      const created = await ok(t, "POST", G, {
        name: "Cheap models only",
        description: "marketing",
        limit_usd: 12.345678901,
        reset_interval: "weekly",
        include_byok_in_budgets: true,
        allowed_models: ["MOCK/ECHO", "mock/echo", "mock/embed"],
        ignored_models: ["mock/unavailable"],
        allowed_providers: ["Mock"],
        ignored_providers: null,
        allowed_data_regions: ["europe", "us", "europe"],
        enforce_zdr: true,
        enforce_zdr_openai: false,
        enable_free_model_publication: false,
        enable_free_model_training: null,
        content_filters: [
          { pattern: "\\b\\d{3}-\\d{4}\\b", action: "redact", label: "[NUMBER]" },
          { pattern: "project-x", action: "block" },
        ],
        content_filter_builtins: [
          { slug: "email", action: "redact", label: "[MINE]" },
          { slug: "regex-prompt-injection", action: "block" },
          { slug: "credit-card", action: "flag" },
        ],
        unknown_field: "ignored",
      });
      const g = created.data;
      expect(g).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: "Cheap models only",
        description: "marketing",
        workspace_id: t.workspaceId,
        is_default: false,
        limit_usd: 12.345678901,
        reset_interval: "weekly",
        include_byok_in_budgets: true,
        allowed_models: ["mock/echo", "mock/embed"],
        ignored_models: ["mock/unavailable"],
        allowed_providers: ["mock"],
        ignored_providers: null,
        allowed_data_regions: ["europe", "us"],
        enforce_zdr: true,
        enforce_zdr_anthropic: true,
        enforce_zdr_openai: false,
        enforce_zdr_google: true,
        enforce_zdr_xai: true,
        enforce_zdr_other: true,
        enable_free_model_publication: false,
        enable_free_model_training: null,
        enable_paid_model_training: null,
        content_filters: [
          { pattern: "\\b\\d{3}-\\d{4}\\b", action: "redact", label: "[NUMBER]" },
          { pattern: "project-x", action: "block", label: null },
        ],
        content_filter_builtins: [
          { slug: "email", action: "redact", label: "[EMAIL]" },
          {
            slug: "regex-prompt-injection",
            action: "block",
            label: "[PROMPT_INJECTION]",
            scan_scope: "all_messages",
          },
          { slug: "credit-card", action: "flag", label: "[CREDIT_CARD]" },
        ],
        created_at: "2026-11-18T12:00:00.000Z",
        updated_at: "2026-11-18T12:00:00.000Z",
      });
      expect(await ok(t, "GET", `${G}/${g.id}`)).toEqual({ data: g });
      expect(await ok(t, "GET", `${G}/${g.id.toUpperCase()}`)).toEqual({ data: g });
      // A minimal guardrail: everything unset.
      const bare = (await ok(t, "POST", G, { name: "bare" })).data;
      expect(bare).toMatchObject({
        limit_usd: null,
        reset_interval: null,
        include_byok_in_budgets: false,
        allowed_models: null,
        content_filters: null,
        content_filter_builtins: null,
        enforce_zdr: null,
        enforce_zdr_xai: null,
      });
      await ok(t, "DELETE", `${G}/${bare.id}`);
      await ok(t, "DELETE", `${G}/${g.id}`);
    });

    it("PATCH replaces what it sends, keeps what it leaves out, and a refused one changes nothing", async () => {
      const { t } = env;
      const g = (
        await ok(t, "POST", G, {
          name: "before",
          limit_usd: 10,
          reset_interval: "daily",
          allowed_models: ["mock/echo", "mock/embed"],
          content_filters: [{ pattern: "one", action: "flag" }],
          content_filter_builtins: [
            { slug: "regex-prompt-injection", action: "flag", scan_scope: "user_only" },
          ],
          enforce_zdr_google: true,
        })
      ).data;
      t.clock.advance(60_000);
      const patched = (
        await ok(t, "PATCH", `${G}/${g.id}`, {
          allowed_models: ["mock/unavailable"],
          content_filters: [
            { pattern: "two", action: "block" },
            { pattern: "three", action: "redact", label: "[3]" },
          ],
          description: "now described",
        })
      ).data;
      expect(patched).toEqual({
        ...g,
        allowed_models: ["mock/unavailable"],
        content_filters: [
          { pattern: "two", action: "block", label: null },
          { pattern: "three", action: "redact", label: "[3]" },
        ],
        description: "now described",
        updated_at: "2026-11-18T12:01:00.000Z",
      });
      expect(patched.content_filter_builtins).toEqual([
        {
          slug: "regex-prompt-injection",
          action: "flag",
          label: "[PROMPT_INJECTION]",
          scan_scope: "user_only",
        },
      ]);
      // null removes; {} only touches updated_at
      const cleared = (await ok(t, "PATCH", `${G}/${g.id}`, { allowed_models: null, content_filters: null }))
        .data;
      expect(cleared).toMatchObject({ allowed_models: null, content_filters: null, name: "before" });
      t.clock.advance(1_000);
      const touched = (await ok(t, "PATCH", `${G}/${g.id}`, {})).data;
      expect(touched).toEqual({ ...cleared, updated_at: "2026-11-18T12:01:01.000Z" });

      // A PATCH with one bad field applies none of it.
      const before = await ok(t, "GET", `${G}/${g.id}`);
      for (const [body, message] of [
        [{ name: "after", allowed_models: ["nope/x"] }, /^allowed_models\[0\]: /],
        [
          { name: "after", content_filters: [{ pattern: "(x*)*", action: "block" }] },
          /^content_filters\[0\]\.pattern: /,
        ],
        [{ name: "after", allowed_data_regions: [] }, "allowed_data_regions: at least 1 item"],
        [{ name: "after", limit_usd: 5, reset_interval: null }, "reset_interval: is required with limit_usd"],
        [{ name: "" }, "name: at least 1 character"],
      ] as const) {
        await refused(t, "PATCH", `${G}/${g.id}`, body, message);
      }
      expect(await ok(t, "GET", `${G}/${g.id}`)).toEqual(before);
      await ok(t, "DELETE", `${G}/${g.id}`);
    });

    it("the budget on update: each half alone changes an existing budget, null removes it", async () => {
      const { t } = env;
      const id = (await ok(t, "POST", G, { name: "b", limit_usd: 10, reset_interval: "daily" })).data.id;
      const patch = async (body: object): Promise<unknown> => (await ok(t, "PATCH", `${G}/${id}`, body)).data;
      expect(await patch({ limit_usd: 25.5 })).toMatchObject({ limit_usd: 25.5, reset_interval: "daily" });
      expect(await patch({ reset_interval: "monthly" })).toMatchObject({
        limit_usd: 25.5,
        reset_interval: "monthly",
      });
      expect(await patch({ limit_usd: 1, reset_interval: "weekly" })).toMatchObject({
        limit_usd: 1,
        reset_interval: "weekly",
      });
      expect(await patch({ limit_usd: 0 })).toMatchObject({ limit_usd: 0, reset_interval: "weekly" });
      expect(await patch({ limit_usd: null })).toMatchObject({ limit_usd: null, reset_interval: null });
      await refused(
        t,
        "PATCH",
        `${G}/${id}`,
        { limit_usd: 3 },
        "reset_interval: is required with limit_usd (the guardrail has no budget yet)",
      );
      await refused(
        t,
        "PATCH",
        `${G}/${id}`,
        { reset_interval: "daily" },
        "limit_usd: is required with reset_interval (the guardrail has no budget yet)",
      );
      expect(await patch({ limit_usd: 3, reset_interval: "daily" })).toMatchObject({ limit_usd: 3 });
      expect(await patch({ reset_interval: null })).toMatchObject({ limit_usd: null, reset_interval: null });
      expect(await patch({ limit_usd: null, reset_interval: null })).toMatchObject({ limit_usd: null });
      await ok(t, "DELETE", `${G}/${id}`);
    });

    it("the deprecated enforce_zdr fills the group flags the same body leaves out", async () => {
      const { t } = env;
      const id = (await ok(t, "POST", G, { name: "z", enforce_zdr_xai: true })).data.id;
      const zdr = (g: Record<string, unknown>) =>
        ["enforce_zdr", "anthropic", "openai", "google", "xai", "other"].map((k) =>
          k === "enforce_zdr" ? g[k] : g[`enforce_zdr_${k}`],
        );
      expect(zdr((await ok(t, "GET", `${G}/${id}`)).data)).toEqual([null, null, null, null, true, null]);
      const a = (await ok(t, "PATCH", `${G}/${id}`, { enforce_zdr: false, enforce_zdr_anthropic: true }))
        .data;
      expect(zdr(a)).toEqual([false, true, false, false, false, false]);
      const b = (await ok(t, "PATCH", `${G}/${id}`, { enforce_zdr_openai: true })).data;
      expect(zdr(b)).toEqual([false, true, true, false, false, false]);
      await ok(t, "DELETE", `${G}/${id}`);
    });

    it("lists the organization's guardrails oldest first, pages them, and filters by workspace", async () => {
      const { t } = env;
      const ws2 = (await ok(t, "POST", "/api/v1/workspaces", { name: "Two", slug: "two-list" }, 201)).data.id;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        t.clock.advance(1_000);
        const body = i % 2 === 0 ? { name: `g${i}` } : { name: `g${i}`, workspace_id: ws2 };
        ids.push((await ok(t, "POST", G, body)).data.id);
      }
      const all = await ok(t, "GET", G);
      expect(all.total_count).toBe(5);
      expect(all.data.map((g: { id: string }) => g.id)).toEqual(ids);
      const page = await ok(t, "GET", `${G}?offset=1&limit=2`);
      expect(page.total_count).toBe(5);
      expect(page.data.map((g: { id: string }) => g.id)).toEqual(ids.slice(1, 3));
      expect((await ok(t, "GET", `${G}?offset=5&limit=2`)).data).toEqual([]);
      const inTwo = await ok(t, "GET", `${G}?workspace_id=${ws2}`);
      expect(inTwo.data.map((g: { id: string }) => g.id)).toEqual([ids[1], ids[3]]);
      expect(inTwo.total_count).toBe(2);
      expect((await ok(t, "GET", `${G}?workspace_id=${t.workspaceId}`)).total_count).toBe(3);
      const unknown = await t.call({
        method: "GET",
        url: `${G}?workspace_id=00000000-0000-4000-8000-000000000000`,
      });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().error.message).toMatch(/^workspace_id: /);
      expect((await t.call({ method: "GET", url: `${G}?limit=101` })).statusCode).toBe(400);
      for (const id of ids) await ok(t, "DELETE", `${G}/${id}`);
      expect(await ok(t, "GET", G)).toEqual({ data: [], total_count: 0 });
    });

    it("a malformed or unknown id is 404 on every operation that names one", async () => {
      const { t } = env;
      const hash = await newKey(t, "for-404");
      for (const id of ["nope", "00000000-0000-4000-8000-000000000000", "%20"]) {
        for (const [method, url, payload] of [
          ["GET", `${G}/${id}`, undefined],
          ["PATCH", `${G}/${id}`, { name: "x" }],
          ["DELETE", `${G}/${id}`, undefined],
          ["GET", `${G}/${id}/assignments/keys`, undefined],
          ["GET", `${G}/${id}/assignments/members`, undefined],
          ["POST", `${G}/${id}/assignments/keys`, { key_hashes: [hash] }],
          ["POST", `${G}/${id}/assignments/keys/remove`, { key_hashes: [hash] }],
          ["POST", `${G}/${id}/assignments/members`, { member_user_ids: ["user_x"] }],
          ["POST", `${G}/${id}/assignments/members/remove`, { member_user_ids: ["user_x"] }],
        ] as const) {
          const r = await t.call({ method, url, ...(payload ? { payload } : {}) });
          expect(r.statusCode, `${method} ${url}`).toBe(404);
          expect(r.json().error.code).toBe(404);
        }
      }
    });

    describe("the workspace default guardrail", () => {
      it("exists logically before any write, and is not listed", async () => {
        const { t } = env;
        const id = await defaultGuardrailOf(t, t.workspaceId);
        const ws = (await ok(t, "GET", `/api/v1/workspaces/${t.workspaceId}`)).data;
        const g = (await ok(t, "GET", `${G}/${id}`)).data;
        expect(g).toMatchObject({
          id,
          name: `Workspace ${t.workspaceId} Default`,
          description: null,
          workspace_id: t.workspaceId,
          is_default: true,
          limit_usd: null,
          reset_interval: null,
          include_byok_in_budgets: false,
          allowed_models: null,
          content_filters: null,
          content_filter_builtins: null,
          created_at: ws.created_at,
        });
        expect((await ok(t, "GET", G)).data.map((x: { id: string }) => x.id)).not.toContain(id);
        expect((await ok(t, "GET", `${G}/${id}/assignments/keys`)).total_count).toBe(0);
      });

      it("is stored by its first PATCH, then listed, and cannot be assigned", async () => {
        const { t } = env;
        const id = await defaultGuardrailOf(t, t.workspaceId);
        await refused(
          t,
          "PATCH",
          `${G}/${id}`,
          { limit_usd: 5 },
          "reset_interval: is required with limit_usd (the guardrail has no budget yet)",
        );
        expect((await ok(t, "GET", G)).total_count).toBe(0);
        t.clock.advance(5_000);
        const g = (
          await ok(t, "PATCH", `${G}/${id}`, {
            allowed_models: ["mock/echo"],
            limit_usd: 50,
            reset_interval: "monthly",
          })
        ).data;
        expect(g).toMatchObject({
          id,
          name: `Workspace ${t.workspaceId} Default`,
          is_default: true,
          workspace_id: t.workspaceId,
          allowed_models: ["mock/echo"],
          limit_usd: 50,
        });
        expect(await ok(t, "GET", `${G}/${id}`)).toEqual({ data: g });
        expect((await ok(t, "GET", G)).data).toEqual([g]);
        expect((await ok(t, "GET", `${G}?workspace_id=${t.workspaceId}`)).data).toEqual([g]);
        // A second PATCH updates the same row.
        const renamed = (await ok(t, "PATCH", `${G}/${id}`, { name: "Workspace policy" })).data;
        expect(renamed).toMatchObject({
          name: "Workspace policy",
          allowed_models: ["mock/echo"],
          limit_usd: 50,
        });
        expect((await ok(t, "GET", G)).total_count).toBe(1);

        const hash = await newKey(t, "default-assign");
        await refused(
          t,
          "POST",
          `${G}/${id}/assignments/keys`,
          { key_hashes: [hash] },
          "id: a workspace's default guardrail governs every request of its workspace; it is not assigned to keys or members",
        );
        await refused(
          t,
          "POST",
          `${G}/${id}/assignments/members`,
          { member_user_ids: ["user_a"] },
          /^id: a workspace's default/,
        );
        expect(await ok(t, "POST", `${G}/${id}/assignments/keys/remove`, { key_hashes: [hash] })).toEqual({
          unassigned_count: 0,
        });
        expect((await t.ctx.policy.guardrails(t.organizationId)).byId.get(id)?.isDefault).toBe(true);
      });

      it("DELETE returns it to its empty logical state (and succeeds when it was never stored)", async () => {
        const { t } = env;
        const id = await defaultGuardrailOf(t, t.workspaceId);
        expect(await ok(t, "DELETE", `${G}/${id}`)).toEqual({ deleted: true });
        const g = (await ok(t, "GET", `${G}/${id}`)).data;
        expect(g).toMatchObject({
          name: `Workspace ${t.workspaceId} Default`,
          allowed_models: null,
          limit_usd: null,
        });
        expect((await ok(t, "GET", G)).total_count).toBe(0);
        expect(await ok(t, "DELETE", `${G}/${id}`)).toEqual({ deleted: true });
        expect((await t.ctx.policy.guardrails(t.organizationId)).byId.has(id)).toBe(false);
      });

      it("goes with its workspace; a deleted workspace's default guardrail is 404", async () => {
        const { t } = env;
        const ws = (await ok(t, "POST", "/api/v1/workspaces", { name: "Doomed", slug: "doomed" }, 201)).data;
        const id = ws.default_guardrail_id as string;
        expect((await ok(t, "GET", `${G}/${id}`)).data.workspace_id).toBe(ws.id);
        await ok(t, "PATCH", `${G}/${id}`, { allowed_providers: ["mock"] });
        const placed = (await ok(t, "POST", G, { name: "placed", workspace_id: ws.id })).data.id;
        const hash = await newKey(t, "doomed-key", { workspace_id: ws.id });
        await ok(t, "POST", `${G}/${placed}/assignments/keys`, { key_hashes: [hash] });
        await ok(t, "PATCH", `/api/v1/keys/${hash}`, { disabled: true });
        await ok(t, "DELETE", `/api/v1/workspaces/${ws.id}`);
        for (const method of ["GET", "PATCH", "DELETE"] as const) {
          const r = await t.call({
            method,
            url: `${G}/${id}`,
            ...(method === "PATCH" ? { payload: {} } : {}),
          });
          expect(r.statusCode, method).toBe(404);
        }
        const rows = await t.ctx.store.db
          .selectFrom("guardrails")
          .select("id")
          .where("id", "=", id)
          .execute();
        expect(rows).toEqual([]);
        // A guardrail placed in the workspace stays; its deleted key's assignment does not.
        expect((await ok(t, "GET", `${G}/${placed}`)).data.workspace_id).toBe(ws.id);
        expect((await ok(t, "GET", `${G}/${placed}/assignments/keys`)).total_count).toBe(0);
        await ok(t, "DELETE", `${G}/${placed}`);
        await refused(
          t,
          "POST",
          G,
          { name: "late", workspace_id: ws.id },
          `workspace_id: no workspace ${ws.id} in this organization`,
        );
      });

      it("two first PATCHes at once both land, neither overwriting the other's field", async () => {
        const { t } = env;
        const ws = (await ok(t, "POST", "/api/v1/workspaces", { name: "Race", slug: "race" }, 201)).data;
        const id = ws.default_guardrail_id as string;
        const [a, b] = await Promise.all([
          t.call({ method: "PATCH", url: `${G}/${id}`, payload: { allowed_models: ["mock/echo"] } }),
          t.call({ method: "PATCH", url: `${G}/${id}`, payload: { description: "raced" } }),
        ]);
        expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
        expect((await ok(t, "GET", `${G}/${id}`)).data).toMatchObject({
          allowed_models: ["mock/echo"],
          description: "raced",
          is_default: true,
        });
        await ok(t, "DELETE", `${G}/${id}`);
      });
    });
  });
}
