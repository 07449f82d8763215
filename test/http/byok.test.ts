import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { startRoutedUpstream, type RoutedUpstream } from "../helpers/fake-upstreams/routed.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * POST/PATCH /byok: a provider key is sent as an HTTP header (Authorization, x-api-key), so one
 * that no header can carry is refused with 400 naming `key`, and nothing is stored or changed.
 * Before, a key with a control character inside it (two lines pasted, a tab) or a character beyond
 * U+00FF was stored; every request then failed to send it and fell back to the platform's key,
 * billed to credits, as if the provider were down.
 */
const PLATFORM = "sk-platform";

let upstream: RoutedUpstream;
let file: WrittenProvidersFile;
let s: ListeningApp;
let userKey: string;

beforeAll(async () => {
  upstream = await startRoutedUpstream();
  file = writeProvidersFile(
    [
      {
        slug: "alpha",
        kind: "openai-compatible",
        base_url: upstream.baseUrl("alpha"),
        api_key: PLATFORM,
        timeout_ms: 5_000,
      },
    ],
    [
      {
        id: "solo/alpha",
        provider: "alpha",
        upstream_model: "alpha-solo",
        prompt_price: 1e-6,
        completion_price: 2e-6,
      },
    ],
  );
  s = await startListening({ clock: systemClock, env: { GATEHOUSE_PROVIDERS_FILE: file.path } });
  const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "user", limit: 10 } });
  userKey = r.json<{ key: string }>().key;
});

afterAll(async () => {
  await s?.close();
  await upstream?.close();
  file?.remove();
});

/** The credential the upstream saw for one chat request. */
async function credentialSent(): Promise<string[]> {
  upstream.reset();
  const r = await chat(s, userKey, { model: "solo/alpha" });
  expect(r.status, r.text).toBe(200);
  return upstream.requests().map((q) => (q.authorization ?? "").replace(/^Bearer /, ""));
}

const BAD_KEYS: [string, string][] = [
  ["sk-own-a\nsk-own-b", "must not contain control characters (it is sent as an HTTP header)"],
  ["sk-own\r\nX-Injected: 1", "must not contain control characters (it is sent as an HTTP header)"],
  ["sk-own\tkey", "must not contain control characters (it is sent as an HTTP header)"],
  ["sk-own\u007fkey", "must not contain control characters (it is sent as an HTTP header)"],
  ["sk-own\u0085key", "must not contain control characters (it is sent as an HTTP header)"],
  ["sk-own-ключ", "must not contain characters beyond U+00FF (it is sent as an HTTP header)"],
  ["sk-own-\u{1F511}", "must not contain characters beyond U+00FF (it is sent as an HTTP header)"],
];

describe("a BYOK key no HTTP header can carry", () => {
  it("create is 400 naming key, and nothing is stored", async () => {
    for (const [key, problem] of BAD_KEYS) {
      const r = await s.call({ method: "POST", url: "/api/v1/byok", payload: { provider: "alpha", key } });
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json()).toEqual({ error: { code: 400, message: `key: ${problem}`, metadata: null } });
    }
    const list = await s.call({ method: "GET", url: "/api/v1/byok" });
    expect(list.json<{ total_count: number }>().total_count).toBe(0);
    expect(await credentialSent()).toEqual([PLATFORM]);
  });

  it("update is 400 naming key, and the stored key and the other fields are unchanged", async () => {
    const created = await s.call({
      method: "POST",
      url: "/api/v1/byok",
      payload: { provider: "alpha", key: "sk-own-good", name: "before" },
    });
    expect(created.statusCode, created.body).toBe(201);
    const before = created.json<{ data: { id: string; label: string } }>().data;
    expect(await credentialSent()).toEqual(["sk-own-good"]);
    for (const [key, problem] of BAD_KEYS) {
      const r = await s.call({
        method: "PATCH",
        url: `/api/v1/byok/${before.id}`,
        payload: { key, name: "after" },
      });
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json()).toEqual({ error: { code: 400, message: `key: ${problem}`, metadata: null } });
    }
    const read = await s.call({ method: "GET", url: `/api/v1/byok/${before.id}` });
    expect(read.json<{ data: unknown }>().data).toEqual(before);
    expect(await credentialSent()).toEqual(["sk-own-good"]);
    expect((await s.call({ method: "DELETE", url: `/api/v1/byok/${before.id}` })).statusCode).toBe(200);
  });

  it("a key with spaces or Latin-1 letters inside is a header value, and is accepted and sent", async () => {
    const r = await s.call({
      method: "POST",
      url: "/api/v1/byok",
      payload: { provider: "alpha", key: "sk own é" },
    });
    expect(r.statusCode, r.body).toBe(201);
    const id = r.json<{ data: { id: string } }>().data.id;
    expect(await credentialSent()).toEqual(["sk own é"]);
    expect((await s.call({ method: "DELETE", url: `/api/v1/byok/${id}` })).statusCode).toBe(200);
  });
});
