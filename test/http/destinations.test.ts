import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findDestination } from "../../src/domain/destinations/destination-repo.js";
import { openConfig } from "../../src/domain/destinations/destination-record.js";
import {
  DESTINATION_TYPE_NAMES,
  DESTINATION_TYPES,
} from "../../src/domain/destinations/destination-types.js";
import { insertKey } from "../../src/domain/keys/key-repo.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { insertWorkspace } from "../../src/domain/workspaces/workspace-repo.js";
import { hashKey, keyLabel, newKeyString } from "../../src/lib/ids.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { createBody, SAMPLE_CONFIGS, secretsOf } from "./destinations-fixtures.js";

const BASE = "/api/v1/observability/destinations";

async function addKey(t: TestApp, opts: { management?: boolean; workspaceId?: string } = {}) {
  const key = newKeyString();
  await insertKey(t.ctx.store.db, {
    hash: hashKey(key),
    label: keyLabel(key),
    organizationId: t.organizationId,
    workspaceId: opts.workspaceId ?? t.workspaceId,
    name: "ordinary",
    isManagement: opts.management ?? false,
    limitNano: null,
    limitReset: null,
    includeByokInLimit: false,
    creatorUserId: null,
    externalUser: null,
    externalKeyHash: null,
    expiresAt: null,
    now: t.clock.now(),
  });
  return { key, hash: hashKey(key) };
}

const addWorkspace = (t: TestApp, slug: string) =>
  insertWorkspace(t.ctx.store.db, {
    organizationId: t.organizationId,
    name: slug,
    slug,
    isDefault: false,
    createdBy: null,
    now: t.clock.now(),
  });

describe("observability destinations over HTTP", () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeTestApp();
  });
  afterEach(() => t.close());

  const create = (payload: unknown, auth?: string | null) =>
    t.call({
      method: "POST",
      url: BASE,
      payload: payload as object,
      ...(auth === undefined ? {} : { auth }),
    });

  describe("create", () => {
    it("returns 201 with the 16 fields, SDK defaults and the default workspace", async () => {
      const res = await create({ name: "lf", type: "langfuse", config: SAMPLE_CONFIGS.langfuse });
      expect(res.statusCode).toBe(201);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      const d = res.json().data;
      expect(d).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        type: "langfuse",
        name: "lf",
        workspace_id: t.workspaceId,
        enabled: true,
        privacy_mode: false,
        broadcast_generation_cost: false,
        broadcast_generation_identity: false,
        broadcast_generation_request_context: false,
        sampling_rate: 1,
        api_key_hashes: null,
        filter_rules: null,
        regions: ["global"],
        created_at: "2026-11-18T12:00:00.000Z",
        updated_at: "2026-11-18T12:00:00.000Z",
        config: {
          publicKey: "pk-l...EfGh",
          secretKey: "sk-l...AbCd",
          baseUrl: "https://us.cloud.langfuse.com",
        },
      });
    });

    it("stores every field that was given", async () => {
      const other = await addWorkspace(t, "second");
      const k = await addKey(t);
      const res = await create({
        ...createBody("webhook"),
        enabled: false,
        privacy_mode: true,
        broadcast_generation_cost: true,
        broadcast_generation_identity: true,
        broadcast_generation_request_context: true,
        sampling_rate: 0.25,
        api_key_hashes: [k.hash.toUpperCase(), k.hash],
        filter_rules: {
          enabled: false,
          groups: [
            { logic: "or", rules: [{ field: "total_cost", operator: "gt", value: 0.5 }] },
            { rules: [{ field: "user_id", operator: "not_exists" }] },
          ],
        },
        regions: ["eu", "us", "europe"],
        workspace_id: other,
      });
      expect(res.statusCode).toBe(201);
      const got = (await t.call({ method: "GET", url: `${BASE}/${res.json().data.id}` })).json().data;
      expect(got).toMatchObject({
        workspace_id: other,
        enabled: false,
        privacy_mode: true,
        broadcast_generation_cost: true,
        broadcast_generation_identity: true,
        broadcast_generation_request_context: true,
        sampling_rate: 0.25,
        api_key_hashes: [k.hash],
        filter_rules: {
          enabled: false,
          groups: [
            { logic: "or", rules: [{ field: "total_cost", operator: "gt", value: 0.5 }] },
            { logic: "and", rules: [{ field: "user_id", operator: "not_exists" }] },
          ],
        },
        regions: ["europe", "us"],
        config: {
          url: "https://hooks.example.com/in",
          method: "PUT",
          headers: { "X-Signature": "whse...cdef" },
        },
      });
    });

    it.each([
      [{ type: "langfuse", config: {} }, "name: is required"],
      [{ name: "", type: "langfuse", config: {} }, "name: at least 1 character"],
      [{ name: "   ", type: "ramp", config: SAMPLE_CONFIGS.ramp }, "name: must not be blank"],
      [{ name: "x", config: {} }, "type: is required"],
      [{ name: "x", type: "splunk", config: {} }, /^type: must be one of arize, braintrust/],
      [{ name: "x", type: "langfuse" }, "config: is required"],
      [{ name: "x", type: "langfuse", config: [] }, "config: must be object"],
      [{ name: "x", type: "langfuse", config: null }, "config: must be object"],
      [
        { name: "x", type: "langfuse", config: { publicKey: "pk-lf-12345" } },
        "config.secretKey: is required",
      ],
      [
        { ...createBody("webhook"), config: { url: "ftp://x" } },
        "config.url: must be an absolute http(s) URL",
      ],
      [
        { ...createBody("newrelic"), config: { licenseKey: "abcd1234", region: "EU" } },
        "config.region: must be one of us, eu",
      ],
      [{ ...createBody("ramp"), config: { apiKey: "abc" } }, "config.apiKey: at least 4 characters"],
      [{ ...createBody("ramp"), enabled: "true" }, "enabled: must be boolean"],
      [{ ...createBody("ramp"), sampling_rate: 0 }, /^sampling_rate: /],
      [{ ...createBody("ramp"), sampling_rate: 1.5 }, /^sampling_rate: /],
      [{ ...createBody("ramp"), sampling_rate: "1" }, "sampling_rate: must be number"],
      [{ ...createBody("ramp"), api_key_hashes: [] }, "api_key_hashes: at least 1 item"],
      [{ ...createBody("ramp"), api_key_hashes: ["abc"] }, /^api_key_hashes\[0\]: must match/],
      [
        { ...createBody("ramp"), api_key_hashes: ["a".repeat(64)] },
        "api_key_hashes[0]: no API key with this hash in the organization",
      ],
      [{ ...createBody("ramp"), regions: [] }, "regions: at least 1 item"],
      [{ ...createBody("ramp"), regions: ["mars"] }, "regions[0]: must be one of global, europe, us, eu"],
      [{ ...createBody("ramp"), regions: null }, "regions: must be array"],
      [{ ...createBody("ramp"), workspace_id: "nope" }, "workspace_id: must be a valid uuid"],
      [
        { ...createBody("ramp"), workspace_id: "00000000-0000-4000-8000-000000000000" },
        "workspace_id: no workspace 00000000-0000-4000-8000-000000000000 in this organization",
      ],
      [
        {
          ...createBody("ramp"),
          filter_rules: { groups: [{ rules: [{ field: "colour", operator: "equals", value: "x" }] }] },
        },
        /^filter_rules\.groups\[0\]\.rules\[0\]\.field: must be one of model, provider/,
      ],
      [
        {
          ...createBody("ramp"),
          filter_rules: { groups: [{ rules: [{ field: "model", operator: "like", value: "x" }] }] },
        },
        /^filter_rules\.groups\[0\]\.rules\[0\]\.operator: must be one of equals/,
      ],
      [
        {
          ...createBody("ramp"),
          filter_rules: { groups: [{ rules: [{ field: "model", operator: "equals" }] }] },
        },
        "filter_rules.groups[0].rules[0].value: is required for operator equals",
      ],
      [{ ...createBody("ramp"), filter_rules: { enabled: true } }, "filter_rules.groups: is required"],
    ])("400 for %j", async (payload, expected) => {
      const res = await create(payload);
      expect(res.statusCode).toBe(400);
      const msg = res.json().error.message as string;
      if (typeof expected === "string") expect(msg).toBe(expected);
      else expect(msg).toMatch(expected);
      const list = (await t.call({ method: "GET", url: BASE })).json();
      expect(list.total_count).toBe(0);
    });

    it("a workspace of another organization is 400 and nothing is created", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const res = await create({ ...createBody("ramp"), workspace_id: other.workspaceId });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toBe(
        `workspace_id: no workspace ${other.workspaceId} in this organization`,
      );
    });

    it("a config value no HTTP request can carry is 400 naming it, and nothing is created", async () => {
      // Keys, project and workspace names go into request headers: a value with a control character
      // (a key pasted with its newline) or a header beyond U+00FF was stored, and every delivery and
      // test of the destination then failed before reaching the receiver.
      const CONTROL = "must not contain control characters";
      const cases: [Record<string, unknown>, string][] = [
        [
          { ...createBody("datadog"), config: { ...SAMPLE_CONFIGS.datadog, apiKey: "dd0123456789abcdef\n" } },
          `config.apiKey: ${CONTROL}`,
        ],
        [
          { ...createBody("ramp"), config: { apiKey: "rmp_0123\r\nX-Injected: 1" } },
          `config.apiKey: ${CONTROL}`,
        ],
        [
          { ...createBody("opik"), config: { ...SAMPLE_CONFIGS.opik, workspace: "w\u0001s" } },
          `config.workspace: ${CONTROL}`,
        ],
        [
          { ...createBody("langsmith"), config: { ...SAMPLE_CONFIGS.langsmith, project: "main\tx" } },
          `config.project: ${CONTROL}`,
        ],
        [
          { ...createBody("weave"), config: { ...SAMPLE_CONFIGS.weave, entity: "team\u0085" } },
          `config.entity: ${CONTROL}`,
        ],
        [
          {
            ...createBody("otel-collector"),
            config: { endpoint: "https://otel.example.com:4318", headers: { "X-Team": "ключ" } },
          },
          "config.headers.X-Team: must not contain characters beyond U+00FF (an HTTP header cannot carry them)",
        ],
      ];
      for (const [payload, message] of cases) {
        const res = await create(payload);
        expect(res.statusCode, message).toBe(400);
        expect(res.json().error).toEqual({ code: 400, message, metadata: null });
      }
      expect((await t.call({ method: "GET", url: BASE })).json().total_count).toBe(0);
      // A tab inside a header value, Latin-1 letters and non-header fields beyond U+00FF are fine.
      const ok = await create({
        ...createBody("otel-collector"),
        config: { endpoint: "https://otel.example.com:4318", headers: { "X-Team": "équipe\tone" } },
      });
      expect(ok.statusCode, ok.body).toBe(201);
      const named = await create({
        ...createBody("opik"),
        config: { ...SAMPLE_CONFIGS.opik, projectName: "проект" },
      });
      expect(named.statusCode, named.body).toBe(201);
    });

    it("an API key hash of another organization is refused", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const res = await create({ ...createBody("ramp"), api_key_hashes: [hashKey(other.managementKey)] });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toMatch(/^api_key_hashes\[0\]: no API key/);
    });

    it("caps live destinations at 5 per type per workspace (409); other types and workspaces are separate", async () => {
      for (let i = 0; i < 5; i++) expect((await create(createBody("posthog"))).statusCode).toBe(201);
      const sixth = await create(createBody("posthog"));
      expect(sixth.statusCode).toBe(409);
      expect(sixth.json().error).toEqual({
        code: 409,
        message: expect.stringMatching(/at most 5 destinations of type posthog/),
        metadata: null,
      });
      expect((await create(createBody("ramp"))).statusCode).toBe(201);
      const other = await addWorkspace(t, "second");
      expect((await create({ ...createBody("posthog"), workspace_id: other })).statusCode).toBe(201);
      // Deleting one frees a slot.
      const first = (await t.call({ method: "GET", url: BASE }))
        .json()
        .data.find((d: { type: string }) => d.type === "posthog");
      expect((await t.call({ method: "DELETE", url: `${BASE}/${first.id}` })).json()).toEqual({
        deleted: true,
      });
      expect((await create(createBody("posthog"))).statusCode).toBe(201);
    });
  });

  it("is described in the OpenAPI document, with the 17 types in the create body", async () => {
    const doc = (await t.call({ method: "GET", url: "/api/v1/openapi.json", auth: null })).json();
    const list = doc.paths["/observability/destinations"];
    const one = doc.paths["/observability/destinations/{id}"];
    expect(Object.keys(list).sort()).toEqual(["get", "post"]);
    expect(Object.keys(one).sort()).toEqual(["delete", "get", "patch"]);
    expect(list.post.responses["201"]).toBeDefined();
    const body = list.post.requestBody.content["application/json"].schema;
    expect(body.properties.type.enum).toEqual(DESTINATION_TYPE_NAMES);
  });

  describe("replay", () => {
    it("unknown body fields are ignored, as in every JSON body", async () => {
      // The body was 400 `body: must NOT have additional properties`, naming no field.
      const created = (await create(createBody("ramp"))).json().data;
      const res = await t.call({
        method: "POST",
        url: `${BASE}/${created.id}/replay`,
        payload: { from: "2026-11-17T00:00:00Z", to: "2026-11-18T00:00:00Z", note: "after the outage" },
      });
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json().data).toMatchObject({ destination_id: created.id, offered: 0, truncated: false });
    });
  });

  describe("auth and rate limits", () => {
    it("401 without a key, 403 for an ordinary key on every operation", async () => {
      const ordinary = await addKey(t);
      const id = (await create(createBody("ramp"))).json().data.id;
      const ops = [
        { method: "POST" as const, url: BASE, payload: createBody("ramp") },
        { method: "GET" as const, url: BASE },
        { method: "GET" as const, url: `${BASE}/${id}` },
        { method: "PATCH" as const, url: `${BASE}/${id}`, payload: { name: "x" } },
        { method: "DELETE" as const, url: `${BASE}/${id}` },
      ];
      for (const op of ops) {
        const none = await t.call({ ...op, auth: null });
        expect(none.statusCode).toBe(401);
        const forbidden = await t.call({ ...op, auth: ordinary.key });
        expect(forbidden.statusCode).toBe(403);
        expect(forbidden.json().error.message).toBe("Only management keys can perform this operation");
      }
      expect((await t.call({ method: "GET", url: `${BASE}/${id}` })).statusCode).toBe(200);
    });

    it("429 with Retry-After past the management limit", async () => {
      const limited = await makeTestApp({ env: { RATE_LIMIT_MANAGEMENT_MAX: "3" } });
      try {
        const codes: number[] = [];
        for (let i = 0; i < 4; i++) codes.push((await limited.call({ method: "GET", url: BASE })).statusCode);
        expect(codes).toEqual([200, 200, 200, 429]);
        const res = await limited.call({ method: "GET", url: BASE });
        expect(res.headers["retry-after"]).toBeDefined();
        expect(res.json().error.code).toBe(429);
      } finally {
        await limited.close();
      }
    });
  });

  describe("get", () => {
    it("404 for a malformed id, an unknown id, another organization's and a deleted destination", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const foreign = await t.call({
        method: "POST",
        url: BASE,
        payload: createBody("ramp"),
        auth: other.managementKey,
      });
      expect(foreign.statusCode).toBe(201);
      const mine = (await create(createBody("ramp"))).json().data.id;
      await t.call({ method: "DELETE", url: `${BASE}/${mine}` });
      for (const id of ["not-a-uuid", "00000000-0000-4000-8000-000000000000", foreign.json().data.id, mine]) {
        const res = await t.call({ method: "GET", url: `${BASE}/${id}` });
        expect(res.statusCode).toBe(404);
        expect(res.json().error).toEqual({
          code: 404,
          message: "Observability destination not found",
          metadata: null,
        });
      }
    });

    it("finds a destination of a non-default workspace of the organization", async () => {
      const ws = await addWorkspace(t, "second");
      const id = (await create({ ...createBody("opik"), workspace_id: ws })).json().data.id;
      const res = await t.call({ method: "GET", url: `${BASE}/${id.toUpperCase()}` });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.workspace_id).toBe(ws);
    });
  });

  describe("list", () => {
    it("pages the default workspace's live destinations, oldest first, with total_count", async () => {
      const ids: string[] = [];
      for (const type of DESTINATION_TYPE_NAMES.slice(0, 7)) {
        ids.push((await create(createBody(type))).json().data.id);
        t.clock.advance(1000);
      }
      await t.call({ method: "DELETE", url: `${BASE}/${ids[6]}` });
      const ws = await addWorkspace(t, "second");
      await create({ ...createBody("ramp"), workspace_id: ws });

      const page1 = (await t.call({ method: "GET", url: `${BASE}?limit=4` })).json();
      expect(page1.total_count).toBe(6);
      expect(page1.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(0, 4));
      const page2 = (await t.call({ method: "GET", url: `${BASE}?limit=4&offset=4` })).json();
      expect(page2.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(4, 6));
      const explicit = (
        await t.call({ method: "GET", url: `${BASE}?workspace_id=${t.workspaceId}&offset=0` })
      ).json();
      expect(explicit.total_count).toBe(6);
      const second = (await t.call({ method: "GET", url: `${BASE}?workspace_id=${ws}` })).json();
      expect(second.total_count).toBe(1);
      expect(second.data[0].type).toBe("ramp");
    });

    it.each([
      ["limit=0", /^limit: /],
      ["limit=101", /^limit: /],
      ["offset=-1", /^offset: /],
      ["workspace_id=xyz", "workspace_id: must be a valid uuid"],
      [
        "workspace_id=00000000-0000-4000-8000-000000000000",
        /^workspace_id: no workspace .* in this organization$/,
      ],
    ])("400 for ?%s", async (qs, expected) => {
      const res = await t.call({ method: "GET", url: `${BASE}?${qs}` });
      expect(res.statusCode).toBe(400);
      if (typeof expected === "string") expect(res.json().error.message).toBe(expected);
      else expect(res.json().error.message).toMatch(expected);
    });

    it("with the default workspace deleted: the list is empty and a create must name a workspace", async () => {
      const ws = await addWorkspace(t, "second");
      await t.ctx.store.db
        .updateTable("workspaces")
        .set({ deleted_at: t.clock.now().toISOString() })
        .where("id", "=", t.workspaceId)
        .execute();
      expect((await t.call({ method: "GET", url: BASE })).json()).toEqual({ data: [], total_count: 0 });
      const res = await create(createBody("ramp"));
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toBe(
        "workspace_id: required, the organization has no default workspace",
      );
      expect((await create({ ...createBody("ramp"), workspace_id: ws })).statusCode).toBe(201);
    });

    it("another organization's workspace is not listable", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const res = await t.call({ method: "GET", url: `${BASE}?workspace_id=${other.workspaceId}` });
      expect(res.statusCode).toBe(400);
    });
  });

  describe("update", () => {
    const patch = (id: string, payload: unknown) =>
      t.call({ method: "PATCH", url: `${BASE}/${id}`, payload: payload as object });
    const stored = async (id: string) => {
      const row = await findDestination(t.ctx.store.db, t.organizationId, id);
      return { row: row!, config: openConfig(t.ctx.secretBox, row!) };
    };

    it("changes only the fields sent and moves updated_at", async () => {
      const k = await addKey(t);
      const created = (
        await create({ ...createBody("langfuse"), api_key_hashes: [k.hash], regions: ["us"] })
      ).json().data;
      t.clock.advance(60_000);
      const res = await patch(created.id, { name: "renamed", enabled: false, sampling_rate: 0.5 });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({
        ...created,
        name: "renamed",
        enabled: false,
        sampling_rate: 0.5,
        updated_at: "2026-11-18T12:01:00.000Z",
      });
      expect((await t.call({ method: "GET", url: `${BASE}/${created.id}` })).json().data).toEqual(
        res.json().data,
      );
    });

    it("api_key_hashes null clears; regions omitted keep; filter_rules null clears; type and workspace_id are ignored", async () => {
      const k = await addKey(t);
      const created = (
        await create({
          ...createBody("ramp"),
          api_key_hashes: [k.hash],
          regions: ["eu"],
          filter_rules: { groups: [{ rules: [{ field: "model", operator: "exists" }] }] },
        })
      ).json().data;
      const other = await addWorkspace(t, "second");
      const res = await patch(created.id, {
        api_key_hashes: null,
        filter_rules: null,
        type: "webhook",
        workspace_id: other,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({
        api_key_hashes: null,
        filter_rules: null,
        regions: ["europe"],
        type: "ramp",
        workspace_id: t.workspaceId,
      });
      const again = await patch(created.id, { regions: ["global", "us"], api_key_hashes: [k.hash] });
      expect(again.json().data).toMatchObject({ regions: ["global", "us"], api_key_hashes: [k.hash] });
    });

    it("a config value with a control character is 400 and the stored config is unchanged", async () => {
      const created = (await create(createBody("datadog"))).json().data;
      const res = await patch(created.id, { name: "renamed", config: { apiKey: "dd-rotated-0123456789\n" } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toBe("config.apiKey: must not contain control characters");
      const { row, config } = await stored(created.id);
      expect(row.name).toBe(created.name);
      expect(config.apiKey).toBe(SAMPLE_CONFIGS.datadog.apiKey);
    });

    it("echoing the masked config keeps every secret; the stored row decrypts to the originals", async () => {
      for (const type of DESTINATION_TYPE_NAMES) {
        const created = (await create(createBody(type))).json().data;
        const res = await patch(created.id, { config: created.config });
        expect(res.statusCode, type).toBe(200);
        expect(res.json().data.config).toEqual(created.config);
        const { config } = await stored(created.id);
        for (const [name, value] of Object.entries(SAMPLE_CONFIGS[type]))
          expect(config[name], `${type}.${name}`).toEqual(value);
      }
    });

    it("merges config: a new secret replaces, others stay, the merged config is validated", async () => {
      const created = (await create(createBody("langfuse"))).json().data;
      const res = await patch(created.id, {
        config: { secretKey: "sk-lf-rotated-0123456789", publicKey: "pk-l...EfGh" },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.config).toEqual({ ...created.config, secretKey: "sk-l...6789" });
      const { config } = await stored(created.id);
      expect(config).toEqual({
        ...SAMPLE_CONFIGS.langfuse,
        secretKey: "sk-lf-rotated-0123456789",
        baseUrl: "https://us.cloud.langfuse.com",
      });

      const bad = await patch(created.id, { config: { secretKey: null } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.message).toBe("config.secretKey: is required");
    });

    it("a request with one bad field changes nothing", async () => {
      const created = (await create(createBody("langfuse"))).json().data;
      const before = await stored(created.id);
      t.clock.advance(1000);
      for (const payload of [
        { name: "new", config: { baseUrl: "not a url" } },
        { name: "new", sampling_rate: 2 },
        { name: "new", config: { secretKey: "sk-lf-new-0123456789" }, api_key_hashes: ["b".repeat(64)] },
        { name: "new", regions: [] },
        { name: "new", regions: null },
        { name: null },
        { name: " " },
        {
          config: { secretKey: "sk-lf-new-0123456789" },
          filter_rules: { groups: [{ rules: [{ field: "model", operator: "gt" }] }] },
        },
      ]) {
        const res = await patch(created.id, payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      }
      const after = await stored(created.id);
      expect(after.row).toEqual(before.row);
      expect(after.config).toEqual(before.config);
    });

    it("404 for malformed, unknown, foreign and deleted ids", async () => {
      const other = await createOrganization(t.ctx.store, t.clock, "Other");
      const foreign = (
        await t.call({ method: "POST", url: BASE, payload: createBody("ramp"), auth: other.managementKey })
      ).json().data.id;
      const deleted = (await create(createBody("ramp"))).json().data.id;
      await t.call({ method: "DELETE", url: `${BASE}/${deleted}` });
      for (const id of ["nope", "00000000-0000-4000-8000-000000000000", foreign, deleted]) {
        expect((await patch(id, { name: "x" })).statusCode).toBe(404);
      }
    });
  });

  describe("delete", () => {
    it("soft-deletes: {deleted: true}, then 404 everywhere; the row keeps deleted_at", async () => {
      const id = (await create(createBody("weave"))).json().data.id;
      t.clock.advance(5000);
      const res = await t.call({ method: "DELETE", url: `${BASE}/${id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ deleted: true });
      const row = await t.ctx.store.db
        .selectFrom("destinations")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      expect(row?.deleted_at).toBe("2026-11-18T12:00:05.000Z");
      expect((await t.call({ method: "DELETE", url: `${BASE}/${id}` })).statusCode).toBe(404);
      expect((await t.call({ method: "GET", url: `${BASE}/${id}` })).statusCode).toBe(404);
      expect((await t.call({ method: "DELETE", url: `${BASE}/bad-id` })).statusCode).toBe(404);
      expect((await t.call({ method: "GET", url: BASE })).json().total_count).toBe(0);
    });
  });

  describe("secrets", () => {
    it("never appear in plain text in the database or in any response", async () => {
      const bodies: string[] = [];
      const ids: string[] = [];
      for (const type of DESTINATION_TYPE_NAMES) {
        const res = await create(createBody(type));
        bodies.push(res.body);
        ids.push(res.json().data.id);
      }
      bodies.push((await t.call({ method: "GET", url: `${BASE}?limit=100` })).body);
      for (const id of ids) {
        bodies.push((await t.call({ method: "GET", url: `${BASE}/${id}` })).body);
        bodies.push((await t.call({ method: "PATCH", url: `${BASE}/${id}`, payload: { name: "n" } })).body);
      }
      const rows = await t.ctx.store.db.selectFrom("destinations").selectAll().execute();
      const dump =
        JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)) + bodies.join("\n");
      for (const type of DESTINATION_TYPE_NAMES) {
        for (const s of secretsOf(type, SAMPLE_CONFIGS[type]))
          expect(dump, `${type} secret leaked`).not.toContain(s);
      }
      // The ciphertext is bound to its row: it does not open under another id.
      expect(() => t.ctx.secretBox.open(rows[0]!.config_ciphertext, rows[1]!.id)).toThrow();
      // And every secret field really was stored.
      for (const row of rows) {
        const type = row.type as keyof typeof DESTINATION_TYPES;
        expect(secretsOf(type, openConfig(t.ctx.secretBox, row))).toEqual(
          secretsOf(type, SAMPLE_CONFIGS[type]),
        );
      }
    });

    it("URL credentials are masked on read and kept on echo", async () => {
      const host = "https://admin:s3cretPassw0rd@clickhouse.example.com:8123";
      const created = (
        await create({ ...createBody("clickhouse"), config: { ...SAMPLE_CONFIGS.clickhouse, host } })
      ).json().data;
      expect(created.config.host).toBe("https://****:****@clickhouse.example.com:8123");
      await t.call({
        method: "PATCH",
        url: `${BASE}/${created.id}`,
        payload: { config: { host: created.config.host } },
      });
      const row = await findDestination(t.ctx.store.db, t.organizationId, created.id);
      expect(openConfig(t.ctx.secretBox, row!).host).toBe(host);
    });
  });
});
