import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { hashKey } from "../../src/lib/ids.js";
import { startRoutedUpstream, USAGE, type RoutedUpstream } from "../helpers/fake-upstreams/routed.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * BYOK routing flags (docs/gateway.md "BYOK", src/gateway/byok/byok-routing.ts) through a real
 * listening gateway and a local fake upstream that records the Authorization header of every
 * request: which credential served (the organization's own key or the provider's configured one),
 * in which order credentials are tried when one fails, and what the answer, the generation record
 * and the key's usage say about it (BYOK usage: cost 0 to credits, the cost in byok_usage).
 *
 * Flags: disabled, allowed_models, allowed_api_key_hashes, allowed_user_ids, sort_order,
 * is_fallback, is_byok_only / is_required (either one keeps the platform credential out).
 */
const PRICE = { alpha: [0.000001, 0.000002], beta: [0.000003, 0.000004] } as const;
const costAt = (p: keyof typeof PRICE) =>
  USAGE.prompt_tokens * PRICE[p][0] + USAGE.completion_tokens * PRICE[p][1];
const PLATFORM = { alpha: "sk-alpha-platform", beta: "sk-beta-platform" } as const;

let upstream: RoutedUpstream;
let file: WrittenProvidersFile;
let s: ListeningApp;
/** Two ordinary keys of the organization's default workspace. */
let key: string;
let otherKey: string;
/** BYOK keys created by a test, deleted after it. */
let created: string[] = [];

beforeAll(async () => {
  upstream = await startRoutedUpstream();
  file = writeProvidersFile(
    (["alpha", "beta"] as const).map((slug) => ({
      slug,
      kind: "openai-compatible",
      base_url: upstream.baseUrl(slug),
      api_key: PLATFORM[slug],
      timeout_ms: 5_000,
    })),
    [
      // One model at two providers (alpha first), and one served by alpha alone.
      ...(["alpha", "beta"] as const).map((p) => ({
        id: "multi/chat",
        provider: p,
        upstream_model: `${p}-chat`,
        prompt_price: PRICE[p][0],
        completion_price: PRICE[p][1],
      })),
      {
        id: "solo/alpha",
        provider: "alpha",
        upstream_model: "alpha-solo",
        prompt_price: PRICE.alpha[0],
        completion_price: PRICE.alpha[1],
      },
    ],
  );
  s = await startListening({ clock: systemClock, env: { GATEHOUSE_PROVIDERS_FILE: file.path } });
  key = await mkKey("byok user");
  otherKey = await mkKey("another app");
});

afterAll(async () => {
  await s?.close();
  await upstream?.close();
  file?.remove();
});

afterEach(async () => {
  for (const id of created) {
    expect((await s.call({ method: "DELETE", url: `/api/v1/byok/${id}` })).statusCode).toBe(200);
  }
  created = [];
  upstream.reset();
  await s.app.gateway.recorder.settled();
  expect(await s.app.gateway.holds.store.openCount()).toBe(0);
});

/** A new ordinary key of the default workspace (POST /keys with the management key). */
async function mkKey(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name, limit: 10, ...extra } });
  expect(r.statusCode, r.body).toBe(201);
  return r.json<{ key: string }>().key;
}

/** POST /byok with the management key; the key is deleted after the test. */
async function byok(body: Record<string, unknown>): Promise<string> {
  const r = await s.call({ method: "POST", url: "/api/v1/byok", payload: { provider: "alpha", ...body } });
  expect(r.statusCode, r.body).toBe(201);
  const id = r.json<{ data: { id: string } }>().data.id;
  created.push(id);
  return id;
}

const patchByok = async (id: string, body: Record<string, unknown>) => {
  const r = await s.call({ method: "PATCH", url: `/api/v1/byok/${id}`, payload: body });
  expect(r.statusCode, r.body).toBe(200);
};

const keyUsage = async (k: string) =>
  (await s.call({ method: "GET", url: "/api/v1/key", auth: k })).json<{
    data: { usage: number; byok_usage: number };
  }>().data;

interface Served {
  status: number;
  provider?: string;
  isByok?: boolean;
  cost?: number;
  id?: string;
  /** The credentials the upstream saw, in order (the secret after "Bearer "). */
  creds: string[];
}

/** POST /chat/completions for multi/chat ("Hi", max_tokens 20, then `body`) with `k`; what served it. */
async function serve(body: Record<string, unknown>, k = key): Promise<Served> {
  const r = await chat(s, k, { model: "multi/chat", max_tokens: 20, ...body });
  const b = r.json as Record<string, any>;
  const creds = upstream.requests().map((q) => (q.authorization ?? "").replace(/^Bearer /, ""));
  upstream.reset();
  if (r.status !== 200) return { status: r.status, creds };
  return { status: 200, provider: b.provider, isByok: b.usage.is_byok, cost: b.usage.cost, id: b.id, creds };
}

async function generation(id: string) {
  const r = await s.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
  expect(r.statusCode, r.body).toBe(200);
  return r.json<{ data: Record<string, any> }>().data;
}

describe("which credential serves", () => {
  it("a usable BYOK key serves instead of the platform's: BYOK usage, not credits", async () => {
    await byok({ key: "sk-own-1" });
    const before = await keyUsage(key);
    const o = await serve({});
    expect(o.creds).toEqual(["sk-own-1"]);
    expect(o.isByok).toBe(true);
    expect(o.cost).toBe(0);
    const g = await generation(o.id!);
    expect(g.is_byok).toBe(true);
    expect(g.usage).toBe(0);
    expect(g.upstream_inference_cost).toBeCloseTo(costAt("alpha"), 15);
    const after = await keyUsage(key);
    expect(after.usage).toBe(before.usage);
    expect(after.byok_usage).toBeCloseTo(before.byok_usage + costAt("alpha"), 12);
  });

  it("a key pasted with surrounding whitespace is stored and sent without it; a blank one is 400", async () => {
    const id = await byok({ key: "  sk-own-padded\n" });
    expect((await serve({})).creds).toEqual(["sk-own-padded"]);
    await patchByok(id, { key: "\tsk-own-repasted\r\n" });
    expect((await serve({})).creds).toEqual(["sk-own-repasted"]);
    for (const [method, url] of [
      ["POST", "/api/v1/byok"],
      ["PATCH", `/api/v1/byok/${id}`],
    ] as const) {
      const r = await s.call({ method, url, payload: { provider: "alpha", key: " \n " } });
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json<{ error: { message: string } }>().error.message).toBe("key: must not be blank");
    }
  });

  it("a key stored with a trailing newline before keys were trimmed is sent trimmed", async () => {
    const id = await byok({ key: "sk-own-old" });
    await s.ctx.store.db
      .updateTable("byok_keys")
      .set({ key_ciphertext: s.ctx.secretBox.seal("sk-own-old\n", id) })
      .where("id", "=", id)
      .execute();
    expect((await serve({})).creds).toEqual(["sk-own-old"]);
  });

  describe("a stored key that cannot be decrypted (the data key changed, a damaged row)", () => {
    const damage = async (id: string) =>
      s.ctx.store.db
        .updateTable("byok_keys")
        // Sealed under another data key: authentication fails on open.
        .set({ key_ciphertext: s.ctx.secretBox.seal("sk-other", "another-row") })
        .where("id", "=", id)
        .execute();
    const warnings: string[] = [];
    beforeAll(() => s.app.gateway.onWarning((m) => warnings.push(m)));

    it("is skipped and reported: the organization's other keys, then the platform's, still serve", async () => {
      const bad = await byok({ key: "sk-own-bad", sort_order: 0 });
      await byok({ key: "sk-own-good", sort_order: 1 });
      await damage(bad);
      warnings.length = 0;
      const o = await serve({});
      expect(o.status).toBe(200);
      expect(o.creds).toEqual(["sk-own-good"]);
      expect(warnings.some((w) => w.includes(`BYOK key ${bad} `) && w.includes("cannot be decrypted"))).toBe(
        true,
      );
      // Nothing of any key in the report.
      expect(warnings.join("\n")).not.toMatch(/sk-own|sk-other/);
    });

    it("alone and not required: the platform's credential serves", async () => {
      await damage(await byok({ key: "sk-own-bad" }));
      const o = await serve({});
      expect(o).toMatchObject({ status: 200, isByok: false, creds: [PLATFORM.alpha] });
    });

    it("required (is_byok_only): 503 naming the key, nothing sent, nothing charged", async () => {
      const bad = await byok({ key: "sk-own-bad", is_byok_only: true });
      await damage(bad);
      const before = await keyUsage(key);
      const r = await fetch(`${s.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "solo/alpha",
          messages: [{ role: "user", content: "Hi" }],
          max_tokens: 20,
        }),
      });
      expect(r.status).toBe(503);
      const err = ((await r.json()) as { error: { message: string; metadata: Record<string, unknown> } })
        .error;
      expect(err.message).toContain(`(BYOK ${bad}) is required for this request but cannot be decrypted`);
      expect(err.metadata).toMatchObject({ byok_id: bad, provider: "alpha" });
      expect(upstream.requests()).toEqual([]);
      expect(await keyUsage(key)).toEqual(before);
    });
  });

  it("without one, the platform's configured key serves and is charged to credits", async () => {
    const before = await keyUsage(key);
    const o = await serve({});
    expect(o.creds).toEqual([PLATFORM.alpha]);
    expect(o.isByok).toBe(false);
    expect(o.cost).toBeCloseTo(costAt("alpha"), 15);
    const g = await generation(o.id!);
    expect(g.is_byok).toBe(false);
    expect(g.upstream_inference_cost).toBeNull();
    expect((await keyUsage(key)).usage).toBeCloseTo(before.usage + costAt("alpha"), 12);
  });

  it("a key for another provider is not used: the model's provider has its own credential", async () => {
    await byok({ provider: "beta", key: "sk-own-beta" });
    const o = await serve({});
    expect(o.creds).toEqual([PLATFORM.alpha]);
    expect(o.isByok).toBe(false);
    // …but it is, when the request goes to that provider.
    const b = await serve({ provider: { order: ["beta"] } });
    expect(b.creds).toEqual(["sk-own-beta"]);
    expect(b.isByok).toBe(true);
  });

  it("disabled: not used; enabled again, used again (a write applies to the next request)", async () => {
    const id = await byok({ key: "sk-own-1", disabled: true });
    expect((await serve({})).creds).toEqual([PLATFORM.alpha]);
    await patchByok(id, { disabled: false });
    expect((await serve({})).creds).toEqual(["sk-own-1"]);
    await patchByok(id, { disabled: true });
    const o = await serve({});
    expect(o.creds).toEqual([PLATFORM.alpha]);
    expect(o.isByok).toBe(false);
  });

  it("allowed_models: only for those models", async () => {
    await byok({ key: "sk-own-solo", allowed_models: ["solo/alpha"] });
    const multi = await serve({});
    expect(multi.creds).toEqual([PLATFORM.alpha]);
    expect(multi.isByok).toBe(false);
    const solo = await serve({ model: "solo/alpha" });
    expect(solo.creds).toEqual(["sk-own-solo"]);
    expect(solo.isByok).toBe(true);
  });

  it("allowed_api_key_hashes: only for those keys of the organization", async () => {
    await byok({ key: "sk-own-1", allowed_api_key_hashes: [hashKey(key)] });
    expect((await serve({}, key)).creds).toEqual(["sk-own-1"]);
    const other = await serve({}, otherKey);
    expect(other.creds).toEqual([PLATFORM.alpha]);
    expect(other.isByok).toBe(false);
  });

  it("allowed_user_ids: only for keys whose creator_user_id is one of those users, never the request's `user`", async () => {
    await byok({ key: "sk-own-1", allowed_user_ids: ["alice"] });
    // A key whose creator is Alice (set by a management key) is served with her credential.
    const alices = await mkKey("alice's app", { creator_user_id: "alice" });
    expect((await serve({}, alices)).creds).toEqual(["sk-own-1"]);
    expect((await serve({ user: "someone-else" }, alices)).creds).toEqual(["sk-own-1"]);
    // Any other key of the workspace that claims to be Alice in the request's own `user` field is
    // served with the platform credential: `user` is attribution, not identity.
    const bobs = await mkKey("bob's app", { creator_user_id: "bob" });
    for (const k of [key, bobs]) {
      const claimed = await serve({ user: "alice" }, k);
      expect(claimed.creds).toEqual([PLATFORM.alpha]);
      expect(claimed.isByok).toBe(false);
    }
  });

  it("a key of another workspace is not used", async () => {
    const ws = await s.call({
      method: "POST",
      url: "/api/v1/workspaces",
      payload: { name: "Elsewhere", slug: "elsewhere" },
    });
    expect(ws.statusCode, ws.body).toBe(201);
    await byok({ key: "sk-own-elsewhere", workspace_id: ws.json<{ data: { id: string } }>().data.id });
    expect((await serve({})).creds).toEqual([PLATFORM.alpha]);
  });
});

describe("the order credentials are tried in, and fallbacks between them", () => {
  it("sort_order: the lowest first; a failing key (429/5xx) falls back to the next, then the platform's", async () => {
    await byok({ key: "sk-own-second", sort_order: 5 });
    await byok({ key: "sk-own-first", sort_order: 1 });
    expect((await serve({})).creds).toEqual(["sk-own-first"]);

    upstream.setKeyMode("sk-own-first", 429);
    const o = await serve({});
    expect(o.creds).toEqual(["sk-own-first", "sk-own-second"]);
    expect(o.isByok).toBe(true);

    upstream.setKeyMode("sk-own-first", 429);
    upstream.setKeyMode("sk-own-second", 500);
    const before = await keyUsage(key);
    const p = await serve({});
    expect(p.creds).toEqual(["sk-own-first", "sk-own-second", PLATFORM.alpha]);
    expect(p.isByok).toBe(false);
    expect(p.cost).toBeCloseTo(costAt("alpha"), 15);
    const g = await generation(p.id!);
    expect(g.is_byok).toBe(false);
    expect(g.provider_responses.map((r: { status: number }) => r.status)).toEqual([429, 500, 200]);
    // Each attempt says whose key it used: the two failed ones the organization's own.
    expect(g.provider_responses.map((r: { is_byok: boolean }) => r.is_byok)).toEqual([true, true, false]);
    // Only the platform-served attempt is charged to credits; nothing to BYOK usage.
    const after = await keyUsage(key);
    expect(after.usage).toBeCloseTo(before.usage + costAt("alpha"), 12);
    expect(after.byok_usage).toBe(before.byok_usage);
  });

  it("equal sort_order (keys created at once take the same default): tried in creation order", async () => {
    const names = ["sk-own-t1", "sk-own-t2", "sk-own-t3", "sk-own-t4", "sk-own-t5", "sk-own-t6"];
    for (const k of names) {
      await byok({ key: k, sort_order: 4 });
      await new Promise((r) => setTimeout(r, 2)); // distinct creation times
    }
    for (const k of names) upstream.setKeyMode(k, 429);
    expect((await serve({})).creds).toEqual([...names, PLATFORM.alpha]);
  });

  it("sort_order changed by PATCH applies to the next request", async () => {
    const a = await byok({ key: "sk-own-a", sort_order: 1 });
    await byok({ key: "sk-own-b", sort_order: 2 });
    expect((await serve({})).creds).toEqual(["sk-own-a"]);
    await patchByok(a, { sort_order: 3 });
    expect((await serve({})).creds).toEqual(["sk-own-b"]);
  });

  it("is_fallback: after the platform's credential, used only when it fails", async () => {
    await byok({ key: "sk-own-fallback", is_fallback: true });
    const first = await serve({});
    expect(first.creds).toEqual([PLATFORM.alpha]);
    expect(first.isByok).toBe(false);

    upstream.setKeyMode(PLATFORM.alpha, 503);
    const o = await serve({});
    expect(o.creds).toEqual([PLATFORM.alpha, "sk-own-fallback"]);
    expect(o.isByok).toBe(true);
    expect(o.cost).toBe(0);
    expect((await generation(o.id!)).upstream_inference_cost).toBeCloseTo(costAt("alpha"), 15);
  });

  it("keys not marked is_fallback, then the platform's, then is_fallback keys; then the next provider", async () => {
    await byok({ key: "sk-own-fallback", is_fallback: true, sort_order: 0 });
    await byok({ key: "sk-own-primary", sort_order: 9 });
    for (const secret of ["sk-own-primary", PLATFORM.alpha, "sk-own-fallback"])
      upstream.setKeyMode(secret, 429);
    const o = await serve({});
    expect(o.creds).toEqual(["sk-own-primary", PLATFORM.alpha, "sk-own-fallback", PLATFORM.beta]);
    expect(o.provider).toBe("beta");
    expect(o.isByok).toBe(false);
    expect(o.cost).toBeCloseTo(costAt("beta"), 15);
  });

  for (const flag of ["is_byok_only", "is_required"] as const) {
    it(`${flag}: the platform's credential for that provider is never used`, async () => {
      await byok({ key: "sk-own-only", [flag]: true });
      expect((await serve({})).creds).toEqual(["sk-own-only"]);
      // The own key failing: no platform attempt at alpha; the next provider is still tried.
      upstream.setKeyMode("sk-own-only", 429);
      const o = await serve({});
      expect(o.creds).toEqual(["sk-own-only", PLATFORM.beta]);
      expect(o.provider).toBe("beta");
      // Alone (the model has no other provider): the own key's failure is the answer.
      upstream.setKeyMode("sk-own-only", 429);
      const solo = await serve({ model: "solo/alpha" });
      expect(solo.status).toBe(429);
      expect(solo.creds).toEqual(["sk-own-only"]);
    });
  }

  it("is_byok_only on a key the request may not use (allowed_models) does not keep the platform out", async () => {
    await byok({ key: "sk-own-only", is_byok_only: true, allowed_models: ["solo/alpha"] });
    const o = await serve({});
    expect(o.creds).toEqual([PLATFORM.alpha]);
  });
});
