import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import type { RecordStore } from "../../src/stores/record-store.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import type { StoreFactory } from "../helpers/stores.js";

/** JSON schema as it appears in the OpenAPI document (TypeBox output, no $refs). */
export type JsonSchema = Record<string, any>;

export interface FuzzRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** OpenAPI template with the /api/v1 prefix: `/api/v1/keys/{hash}`. */
  template: string;
  pathParams: { name: string; schema: JsonSchema }[];
  query: { name: string; schema: JsonSchema }[];
  /** The JSON body schema, or null when the operation takes no body. */
  body: JsonSchema | null;
}

/** Routes that a valid ordinary (non-management) key may call. Every other route answers it 403. */
export const ANY_KEY_ROUTES = new Set(["GET /api/v1/key", "GET /api/v1/models/user"]);

/** Data-plane routes for an ordinary key only (a management key is 403; a disabled key 403). */
export const INFERENCE_ROUTES = new Set([
  "POST /api/v1/chat/completions",
  "POST /api/v1/responses",
  "POST /api/v1/messages",
  "POST /api/v1/messages/count_tokens",
  "POST /api/v1/embeddings",
]);

/** Routes without authentication: what the installation routes to. */
export const PUBLIC_ROUTES = new Set([
  "GET /api/v1/models",
  "GET /api/v1/models/count",
  "GET /api/v1/models/{*}",
  "GET /api/v1/model/{*}",
  "GET /api/v1/providers",
  "GET /api/v1/embeddings/models",
]);

/** Routes open to any valid key of the organization that need a record id (answer 404 without one). */
export const ANY_KEY_RECORD_ROUTES = new Set(["GET /api/v1/generation", "GET /api/v1/generation/content"]);

/** Every route a management key alone may call. */
export const isManagementRoute = (name: string): boolean =>
  !ANY_KEY_ROUTES.has(name) &&
  !INFERENCE_ROUTES.has(name) &&
  !PUBLIC_ROUTES.has(name) &&
  !ANY_KEY_RECORD_ROUTES.has(name);

/** No request may take longer than this: a slower answer counts as a hang. */
export const REQUEST_TIMEOUT_MS = 5_000;

const PREFIX = "/api/v1";

/**
 * Every operation of the API, read from the OpenAPI document the app serves, so that a route added
 * later is fuzzed without touching these tests.
 */
export async function discoverRoutes(t: TestApp): Promise<FuzzRoute[]> {
  const res = await t.call({ method: "GET", url: `${PREFIX}/openapi.json` });
  expect(res.statusCode).toBe(200);
  const doc = res.json();
  const routes: FuzzRoute[] = [];
  for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const params: any[] = op.parameters ?? [];
      routes.push({
        method: method.toUpperCase() as FuzzRoute["method"],
        template: `${PREFIX}${path}`,
        pathParams: params.filter((p) => p.in === "path").map((p) => ({ name: p.name, schema: p.schema })),
        query: params.filter((p) => p.in === "query").map((p) => ({ name: p.name, schema: p.schema })),
        body: op.requestBody?.content?.["application/json"]?.schema ?? null,
      });
    }
  }
  return routes;
}

export const routeName = (r: FuzzRoute): string => `${r.method} ${r.template}`;

/** The records the fuzzed requests aim at, so that bodies reach validation of real resources. */
export interface Seeds {
  workspaceId: string;
  workspaceSlug: string;
  /** An ordinary key in the seeded workspace (so the workspace can never be deleted). */
  ordinaryKey: string;
  ordinaryHash: string;
  /** An ordinary key for the data-plane routes (see makeFuzzWorld). */
  inferenceKey: string;
  destinationId: string;
  /** A guardrail with the ordinary key assigned (the guardrail routes' `id`). */
  guardrailId: string;
  /** A member of the organization and of the seeded workspace, with an active key there. */
  memberId: string;
  disabledKey: string;
  deletedKey: string;
  expiredKey: string;
}

export interface FuzzWorld {
  t: TestApp;
  store: RecordStore;
  routes: FuzzRoute[];
  /** Every table of the record store (migration bookkeeping included). */
  tables: string[];
  seeds: Seeds;
  /** The store's rows after the last request that answered 4xx; null after anything else. */
  lastSnapshot: Record<string, string[]> | null;
  /** Values that identify seeded records: random path segments must not be one of them. */
  knownRefs: Set<string>;
  close(): Promise<void>;
}

const HIGH_LIMIT = { max: 1_000_000_000, windowMs: 60_000 };

/** A real app on a real store with one organization and a few records of every resource. */
export async function makeFuzzWorld(factory?: StoreFactory): Promise<FuzzWorld> {
  const store = factory ? await factory.open() : undefined;
  const t = await makeTestApp({
    ...(store ? { store } : {}),
    config: {
      rateLimit: {
        management: HIGH_LIMIT,
        keyUpdate: HIGH_LIMIT,
        analytics: HIGH_LIMIT,
        ingest: HIGH_LIMIT,
        inference: HIGH_LIMIT,
      },
    },
  });
  // Response bodies of the seeding calls: read field by field below.
  const ok = async (opts: InjectOptions & { auth?: string | null }): Promise<any> => {
    const res = await t.call(opts);
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  const slug = "fuzz-ws";
  const ws = await ok({ method: "POST", url: `${PREFIX}/workspaces`, payload: { name: "Fuzz", slug } });
  const workspaceId: string = ws.data.id;
  const mkKey = async (name: string, extra: Record<string, unknown> = {}): Promise<any> =>
    ok({
      method: "POST",
      url: `${PREFIX}/keys`,
      payload: { name, workspace_id: workspaceId, limit: 10, ...extra },
    });
  // A member in the seeded workspace whose active key (the ordinary one) keeps it there and in the
  // organization: fuzzed removals and deletes of it are refused, so it stays to aim at.
  const member = await ok({
    method: "POST",
    url: `${PREFIX}/organization/members`,
    payload: { email: "fuzz@example.com" },
  });
  const memberId: string = member.data.id;
  await ok({
    method: "POST",
    url: `${PREFIX}/workspaces/${workspaceId}/members/add`,
    payload: { user_ids: [memberId] },
  });
  const ordinary = await mkKey("ordinary", { creator_user_id: memberId });
  // The data plane's caller: in the default workspace, no limit, a hash no fuzzed path names (so
  // random PATCHes and budgets elsewhere never disable or exhaust it).
  const inference = await ok({ method: "POST", url: `${PREFIX}/keys`, payload: { name: "inference" } });
  const disabled = await mkKey("disabled");
  await ok({ method: "PATCH", url: `${PREFIX}/keys/${disabled.data.hash}`, payload: { disabled: true } });
  const deleted = await mkKey("deleted");
  await ok({ method: "DELETE", url: `${PREFIX}/keys/${deleted.data.hash}` });
  const expiresAt = new Date(t.clock.now().getTime() + 60_000).toISOString().replace(/\.\d+Z$/, "Z");
  const expired = await mkKey("expired", { expires_at: expiresAt });
  t.clock.advance(120_000);
  await ok({
    method: "PUT",
    url: `${PREFIX}/workspaces/${workspaceId}/budgets/monthly`,
    payload: { limit_usd: 100 },
  });
  const dest = await ok({
    method: "POST",
    url: `${PREFIX}/observability/destinations`,
    payload: {
      name: "fuzz",
      type: "webhook",
      workspace_id: workspaceId,
      config: { url: "https://hooks.example.com/in" },
    },
  });
  const guardrail = await ok({
    method: "POST",
    url: `${PREFIX}/guardrails`,
    payload: { name: "fuzz", workspace_id: workspaceId, allowed_models: ["mock/echo"] },
  });
  await ok({
    method: "POST",
    url: `${PREFIX}/guardrails/${guardrail.data.id}/assignments/keys`,
    payload: { key_hashes: [ordinary.data.hash] },
  });
  const seeds: Seeds = {
    workspaceId,
    workspaceSlug: slug,
    ordinaryKey: ordinary.key,
    inferenceKey: inference.key,
    ordinaryHash: ordinary.data.hash,
    destinationId: dest.data.id,
    guardrailId: guardrail.data.id,
    memberId,
    disabledKey: disabled.key,
    deletedKey: deleted.key,
    expiredKey: expired.key,
  };
  const knownRefs = new Set(
    [
      workspaceId,
      t.workspaceId,
      slug,
      "default",
      seeds.ordinaryHash,
      seeds.destinationId,
      seeds.guardrailId,
      seeds.memberId,
      "daily",
      "weekly",
      "monthly",
      "lifetime",
    ].map((s) => s.toLowerCase()),
  );
  const routes = await discoverRoutes(t);
  const tables = (await t.ctx.store.db.introspection.getTables({ withInternalKyselyTables: true }))
    .map((x) => x.name)
    .sort();
  expect(tables).toEqual(expect.arrayContaining(["api_keys", "budgets", "destinations", "workspaces"]));
  return {
    t,
    store: t.ctx.store,
    routes,
    tables,
    seeds,
    lastSnapshot: null,
    knownRefs,
    close: async () => {
      await t.close();
      if (store) await store.dispose();
    },
  };
}

/** The seeded record a path parameter names, so that the request reaches its handler. */
export function validParam(w: FuzzWorld, route: FuzzRoute, name: string): string {
  const s = w.seeds;
  if (name === "hash") return s.ordinaryHash;
  if (name === "workspace_ref") return s.workspaceId;
  if (name === "interval") return "monthly";
  if (name === "id" && route.template.includes("/destinations/")) return s.destinationId;
  if (name === "id" && route.template.includes("/organization/members/")) return s.memberId;
  if (name === "id" && route.template.includes("/workspaces/")) return s.workspaceId;
  if (name === "id" && route.template.includes("/guardrails/")) return s.guardrailId;
  // An unknown resource: a well-formed id that matches nothing (the route answers 404).
  return "00000000-0000-4000-8000-000000000000";
}

/** The route's URL with every path parameter set: to `overrides[name]` (already URL-encoded) or a seed. */
export function fillPath(w: FuzzWorld, route: FuzzRoute, overrides: Record<string, string> = {}): string {
  return route.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
    name in overrides ? overrides[name]! : encodeURIComponent(validParam(w, route, name)),
  );
}

/** Every row of every table of the record store, in a stable order, comparable with toEqual. */
export async function snapshot(store: RecordStore, tables: string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = await store.db
      .selectFrom(table as never)
      .selectAll()
      .execute();
    out[table] = rows
      .map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)))
      .sort();
  }
  return out;
}

/** Own property names of Object.prototype: a polluted prototype gains one. */
const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort().join(",");
const PRISTINE_PROTOTYPE = prototypeKeys();

/** What is wrong with an error response (empty when it is the envelope with code = status). */
/** Anthropic's error envelope (the Messages routes): {type:"error", error:{type,message,…}, request_id}. */
function anthropicEnvelopeProblems(body: any, res: LightMyRequestResponse): string[] {
  const problems: string[] = [];
  if (Object.keys(body).sort().join() !== "error,request_id,type")
    problems.push(`top-level keys ${Object.keys(body).join()}`);
  if (body.type !== "error") problems.push("type is not error");
  const e = body.error;
  if (e === null || typeof e !== "object") return [...problems, "error is not an object"];
  if (typeof e.type !== "string" || e.type === "") problems.push("error.type not a string");
  if (typeof e.message !== "string" || e.message.length === 0)
    problems.push("message not a non-empty string");
  if (res.statusCode >= 500 && e.type !== "api_error" && e.type !== "overloaded_error")
    problems.push(`a ${res.statusCode} typed ${e.type}`);
  return problems;
}

/**
 * Problems with an error answer's envelope: Gatehouse's (`{error:{code,message,metadata}}`), or on
 * the Anthropic Messages routes Anthropic's (`anthropic` true).
 */
export function envelopeProblems(res: LightMyRequestResponse, anthropic = false): string[] {
  const problems: string[] = [];
  if (!/^application\/json/.test(String(res.headers["content-type"]))) problems.push("content-type not JSON");
  let body: any;
  try {
    body = JSON.parse(res.body);
  } catch {
    return [...problems, "body is not JSON"];
  }
  if (body === null || typeof body !== "object") return [...problems, "body is not an object"];
  if (anthropic) return [...problems, ...anthropicEnvelopeProblems(body, res)];
  const top = Object.keys(body).filter((k) => k !== "gatehouse_metadata");
  if (top.join() !== "error") problems.push(`top-level keys ${top.join()}`);
  const e = body.error;
  if (e === null || typeof e !== "object") return [...problems, "error is not an object"];
  if (Object.keys(e).sort().join() !== "code,message,metadata")
    problems.push(`error keys ${Object.keys(e).join()}`);
  if (!Number.isInteger(e.code) || e.code !== res.statusCode)
    problems.push(`code ${e.code} != ${res.statusCode}`);
  if (typeof e.message !== "string" || e.message.length === 0)
    problems.push("message not a non-empty string");
  const m = e.metadata;
  if (!(m === null || (typeof m === "object" && !Array.isArray(m))))
    problems.push("metadata not object|null");
  return problems;
}

export function expectEnvelope(res: LightMyRequestResponse, anthropic = false): void {
  expect(envelopeProblems(res, anthropic), `${res.statusCode} ${res.body.slice(0, 300)}`).toEqual([]);
}

export interface SendOptions {
  method: string;
  url: string;
  /** A raw body (string or bytes); sent as is. */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  /** Authorization header: the management key unless given; null sends none. */
  auth?: string | null;
}

/** A request with a time bound: a request that does not answer in time fails as a hang. */
export async function injectBounded(w: FuzzWorld, opts: SendOptions): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  const inference = INFERENCE_ROUTES.has(`${opts.method} ${opts.url.split("?")[0]}`);
  const auth = opts.auth === undefined ? `Bearer ${inference ? w.seeds.inferenceKey : w.t.key}` : opts.auth;
  if (auth !== null) headers.authorization = auth;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`hang: ${opts.method} ${opts.url.slice(0, 200)} took > ${REQUEST_TIMEOUT_MS} ms`)),
      REQUEST_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([
      w.t.app.inject({
        method: opts.method as InjectOptions["method"],
        url: opts.url,
        headers,
        ...(opts.payload !== undefined ? { payload: opts.payload } : {}),
      }),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends one request and checks the invariants every bad request must keep: an answer in bounded
 * time, never a 5xx, the error envelope on every 4xx, no change to any stored row after a 4xx, and
 * no prototype pollution. Returns the response for further checks.
 */
export async function sendChecked(w: FuzzWorld, opts: SendOptions): Promise<LightMyRequestResponse> {
  // The state after the previous 4xx is the state before this request: only a 2xx can change it.
  const before = w.lastSnapshot ?? (await snapshot(w.store, w.tables));
  w.lastSnapshot = null;
  const res = await injectBounded(w, opts);
  const status = res.statusCode;
  if (status >= 500 || prototypeKeys() !== PRISTINE_PROTOTYPE || "polluted" in {}) {
    const where = `${opts.method} ${opts.url.slice(0, 200)} → ${status} ${res.body.slice(0, 300)}`;
    expect(status, where).toBeLessThan(500);
    expect(prototypeKeys(), where).toBe(PRISTINE_PROTOTYPE);
    expect("polluted" in {}, where).toBe(false);
  }
  if (status >= 400) {
    expectEnvelope(res, /^\/api\/v1\/messages(\/|\?|$)/.test(opts.url));
    const after = await snapshot(w.store, w.tables);
    if (JSON.stringify(after) !== JSON.stringify(before)) {
      expect(after, `state changed by ${opts.method} ${opts.url.slice(0, 200)} → ${status}`).toEqual(before);
    }
    w.lastSnapshot = after;
  }
  return res;
}

/** JSON text of a body value: a JSON string sent with `content-type: application/json`. */
export const jsonRequest = (
  method: string,
  url: string,
  value: unknown,
  extraHeaders: Record<string, string> = {},
): SendOptions => ({
  method,
  url,
  payload: JSON.stringify(value) ?? "null",
  headers: { "content-type": "application/json", ...extraHeaders },
});
