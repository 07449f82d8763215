import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * One organization never sees another's gateway records, through a real listening server: GET
 * /generation?id=, GET/PATCH/DELETE /byok/:id, GET /byok, GET /activity. Another organization's
 * record answers exactly as an id that names nothing (404, the same body), so its existence does
 * not leak; a write aimed at it changes nothing. Within an organization, an ordinary key sees only
 * its own generations (the same 404 for its sibling's), and the key that made one sees it.
 */
let s: ListeningApp;
/** Organization A: two ordinary keys; A1 made the generation. */
let a1: string;
let a2: string;
let generationId: string;
let byokId: string;
/** Organization B's management key. */
let b: string;

const UNKNOWN_GENERATION = "gen-1763467200000-AAAAAAAAAAAAAAAAAAAAAAAA";
const UNKNOWN_BYOK = "00000000-0000-4000-8000-000000000000";
const BYOK_SECRET = "sk-or-own-CROSSORG-0123456789abcdef";

const get = (url: string, auth: string) =>
  fetch(`${s.baseUrl}${url}`, { headers: { authorization: `Bearer ${auth}` } });
const send = (method: string, url: string, auth: string, body?: unknown) =>
  fetch(`${s.baseUrl}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${auth}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
const answer = async (r: Response) => ({ status: r.status, body: await r.text() });

beforeAll(async () => {
  s = await startListening();
  const mk = async (name: string) =>
    (await s.call({ method: "POST", url: "/api/v1/keys", payload: { name, limit: 10 } })).json<{
      key: string;
    }>().key;
  a1 = await mk("a1");
  a2 = await mk("a2");
  const answer = await chat(s, a1, {
    model: "mock/echo",
    messages: [{ role: "user", content: "secret plans" }],
  });
  expect(answer.status).toBe(200);
  generationId = (answer.json as { id: string }).id;
  await s.app.gateway.recorder.settled();
  const created = await s.call({
    method: "POST",
    url: "/api/v1/byok",
    payload: { provider: "openai", key: BYOK_SECRET, name: "A's key" },
  });
  expect(created.statusCode, created.body).toBe(201);
  expect(created.body).not.toContain(BYOK_SECRET);
  byokId = created.json<{ data: { id: string } }>().data.id;
  b = (await createOrganization(s.ctx.store, s.clock, "Organization B")).managementKey;
});

afterAll(async () => {
  await s?.close();
});

describe("GET /generation?id=", () => {
  it("the key that made it and its organization's management key see it", async () => {
    for (const k of [a1, s.key]) {
      const r = await get(`/generation?id=${generationId}`, k);
      expect(r.status).toBe(200);
      expect(((await r.json()) as { data: { id: string } }).data.id).toBe(generationId);
    }
  });

  it("another organization's management key gets the 404 of an unknown id", async () => {
    const theirs = await answer(await get(`/generation?id=${generationId}`, b));
    const unknown = await answer(await get(`/generation?id=${UNKNOWN_GENERATION}`, b));
    expect(theirs.status).toBe(404);
    expect(theirs).toEqual(unknown);
  });

  it("a sibling ordinary key of the same organization gets the 404 of an unknown id", async () => {
    const sibling = await answer(await get(`/generation?id=${generationId}`, a2));
    const unknown = await answer(await get(`/generation?id=${UNKNOWN_GENERATION}`, a2));
    expect(sibling.status).toBe(404);
    expect(sibling).toEqual(unknown);
  });
});

describe("/byok", () => {
  it("GET, PATCH and DELETE of another organization's id answer the 404 of an unknown id", async () => {
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { name: "taken over", disabled: true }],
      ["DELETE", undefined],
    ] as const) {
      const theirs = await answer(await send(method, `/byok/${byokId}`, b, body));
      const unknown = await answer(await send(method, `/byok/${UNKNOWN_BYOK}`, b, body));
      expect(theirs.status, `${method}: ${theirs.body}`).toBe(404);
      expect(theirs, method).toEqual(unknown);
    }
  });

  it("the owner's key is untouched by those writes, and its reads never show the secret", async () => {
    const one = await get(`/byok/${byokId}`, s.key);
    expect(one.status).toBe(200);
    const text = await one.text();
    expect(JSON.parse(text)).toMatchObject({ data: { id: byokId, name: "A's key", disabled: false } });
    const list = await get("/byok", s.key);
    const listText = await list.text();
    expect(listText).toContain(byokId);
    for (const t of [text, listText]) {
      expect(t).not.toContain(BYOK_SECRET);
      expect(t).not.toContain("CROSSORG");
    }
    // Encrypted at rest: the stored row holds neither the secret nor a recognisable piece of it.
    const row = await s.ctx.store.db
      .selectFrom("byok_keys")
      .selectAll()
      .where("id", "=", byokId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain(
      "CROSSORG",
    );
  });

  it("another organization's list is empty", async () => {
    const r = await get("/byok", b);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ data: [], total_count: 0 });
  });
});

describe("GET /activity", () => {
  it("another organization's report holds none of this organization's requests", async () => {
    s.clock.advance(86_400_000);
    const mine = (await (await get("/activity", s.key)).json()) as { data: { requests: number }[] };
    expect(mine.data.reduce((n, r) => n + r.requests, 0)).toBe(1);
    const r = await get("/activity", b);
    expect(r.status).toBe(200);
    expect(((await r.json()) as { data: unknown[] }).data).toEqual([]);
  });
});
