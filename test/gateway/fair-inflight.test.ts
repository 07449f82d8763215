import { type ClientRequest, type ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { waitFor } from "../helpers/broadcast-receiver.js";
import { leaveStreamAfter, sendChat } from "../helpers/leave-stream.js";
import { sleep, sse, startFakeServer, type FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Fair use of the upstreams (docs/gateway.md "Fair use: requests in flight"), through a real
 * listening server and a fake provider on 127.0.0.1 whose `slow` model thinks until the test lets
 * it answer (6 s at most, under the 10 s first-byte deadline). One key's burst is capped at
 * GATEHOUSE_MAX_IN_FLIGHT_PER_KEY (64) and one workspace at its share of a provider's connections
 * (75 %), refused 429 at once, so that other keys, workspaces and organizations are still served
 * while it lasts; every slot is given back however its request ended.
 */
const TOKEN = "metrics-token-0123456789";
const THINK_MAX_MS = 6_000;

let gate: Promise<void> = Promise.resolve();
let letAnswer: () => void = () => undefined;
const closeGate = () => {
  gate = new Promise<void>((r) => (letAnswer = r));
};

const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };

function answer(res: ServerResponse, model: string, stream: boolean): void {
  if (res.destroyed) return;
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "up-1",
        object: "chat.completion",
        created: 1,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage,
      }),
    );
    return;
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null, u?: unknown) => ({
    id: "up-1",
    object: "chat.completion.chunk",
    created: 1,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(u ? { usage: u } : {}),
  });
  if (!res.headersSent) res.writeHead(200, { "content-type": "text/event-stream" });
  sse(res, chunk({ role: "assistant", content: "ok" }, null));
  sse(res, chunk({}, "stop", usage));
  res.end("data: [DONE]\n\n");
}

async function startProvider(): Promise<FakeServer> {
  return startFakeServer(async (req, res) => {
    const body = req.body as { model: string; stream?: boolean };
    const stream = body.stream === true;
    if (body.model === "error") {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "upstream broke" } }));
      return;
    }
    if (body.model === "slow-body" && stream) {
      // The stream opens at once, its end waits for the gate.
      res.writeHead(200, { "content-type": "text/event-stream" });
      sse(res, {
        id: "up-1",
        object: "chat.completion.chunk",
        created: 1,
        model: body.model,
        choices: [{ index: 0, delta: { role: "assistant", content: "thinking" }, finish_reason: null }],
      });
    }
    if (body.model.startsWith("slow")) await Promise.race([gate, sleep(THINK_MAX_MS)]);
    answer(res, body.model, stream);
  });
}

interface Answered {
  status: number;
  retryAfter: string | null;
  text: string;
  ms: number;
}

describe("fair use of upstream connections", () => {
  let upstream: FakeServer;
  let file: WrittenProvidersFile;
  let s: ListeningApp;
  /** Keys: two in the first workspace, one in another workspace, one in another organization. */
  const k = { a: "", a2: "", otherWorkspace: "", otherOrg: "" };
  let hashA = "";

  /** A request whose client will leave (`destroy()`), as a browser tab that closes. */
  const send = (key: string, model: string, stream: boolean): ClientRequest =>
    sendChat(s.baseUrl, key, { model, messages: [{ role: "user", content: "hello" }], stream });
  const post = async (key: string, model: string, stream = false): Promise<Answered> => {
    const t0 = performance.now();
    const r = await fetch(`${s.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 16, stream }),
    });
    const text = await r.text();
    return { status: r.status, retryAfter: r.headers.get("retry-after"), text, ms: performance.now() - t0 };
  };
  const metrics = async (): Promise<string> => {
    const origin = new URL(s.baseUrl).origin;
    const r = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.status).toBe(200);
    return r.text();
  };
  const sample = (text: string, line: string): number => {
    const found = text.split("\n").find((l) => l.startsWith(`${line} `));
    return found === undefined ? Number.NaN : Number(found.slice(line.length + 1));
  };
  /** Requests the fake provider received for its `model` (since the test began). */
  const forwarded = (model: string): number =>
    upstream.requests.filter((r) => r.body?.model === model).length;
  const limits = () => s.app.gateway.limits;
  const providerInFlight = (slug: string) =>
    [...limits().byProvider()].find((p) => p.provider === slug)?.inFlight ?? 0;

  beforeAll(async () => {
    upstream = await startProvider();
    const model = (id: string, provider: string, upstreamModel: string) => ({
      id,
      provider,
      upstream_model: upstreamModel,
      prompt_price: 0.000001,
      completion_price: 0.000002,
    });
    file = writeProvidersFile(
      [
        // The default pool: 128 connections.
        {
          slug: "local",
          kind: "openai-compatible",
          base_url: `${upstream.url}/v1`,
          api_key: "sk-fake-local",
        },
        // A small pool: one workspace may hold 6 of its 8 connections (75 %).
        {
          slug: "small",
          kind: "openai-compatible",
          base_url: `${upstream.url}/v1`,
          api_key: "sk-fake-small",
          connections: 8,
        },
      ],
      [
        model("local/slow", "local", "slow"),
        model("local/slow-body", "local", "slow-body"),
        model("local/quick", "local", "quick"),
        model("local/error", "local", "error"),
        model("small/slow", "small", "slow-small"),
        model("small/quick", "small", "quick"),
        // Served by `small` first, `local` when this workspace has used its share of `small`.
        model("any/quick", "small", "quick"),
        model("any/quick", "local", "quick"),
      ],
    );
    s = await startListening({
      env: {
        GATEHOUSE_PROVIDERS_FILE: file.path,
        GATEHOUSE_UPSTREAM_TIMEOUT_MS: "10000",
        GATEHOUSE_METRICS_TOKEN: TOKEN,
        RATE_LIMIT_INFERENCE_MAX: "100000",
      },
    });
    const key = async (payload: Record<string, unknown>, auth = s.key) => {
      const r = await s.call({ method: "POST", url: "/api/v1/keys", payload, auth });
      expect(r.statusCode, r.body).toBe(201);
      return r.json<{ key: string; data: { hash: string } }>();
    };
    const a = await key({ name: "busy" });
    k.a = a.key;
    hashA = a.data.hash;
    k.a2 = (await key({ name: "busy-sibling" })).key;
    const ws = await s.call({
      method: "POST",
      url: "/api/v1/workspaces",
      payload: { name: "Other", slug: "other" },
    });
    expect(ws.statusCode, ws.body).toBe(201);
    const wsId = ws.json<{ data: { id: string } }>().data.id;
    k.otherWorkspace = (await key({ name: "other-workspace", workspace_id: wsId })).key;
    const orgB = await createOrganization(s.ctx.store, s.clock, "Organization B");
    k.otherOrg = (await key({ name: "other-org" }, orgB.managementKey)).key;
  });

  afterAll(async () => {
    letAnswer();
    await s?.close();
    await upstream?.close();
    file?.remove();
  });

  beforeEach(() => {
    closeGate();
    upstream.requests.length = 0;
  });

  it("150 slow requests from one key: 64 forwarded, the rest 429 at once; other keys are served meanwhile; the key sends again once they end", async () => {
    let ended = 0;
    const burst = Array.from({ length: 150 }, (_, i) =>
      post(k.a, "local/slow", i % 2 === 1).then((r) => {
        ended++;
        return r;
      }),
    );
    await waitFor(() => ended === 150 - 64 && forwarded("slow") === 64, 5_000, "64 forwarded, 86 refused");
    expect(limits().ofKey(hashA)).toBe(64);

    // Another organization, another workspace and a sibling key reach the same provider at once.
    const others = await Promise.all([
      post(k.otherOrg, "local/quick"),
      post(k.otherWorkspace, "local/quick", true),
      post(k.a2, "local/quick"),
    ]);
    for (const o of others) {
      expect(o.status, o.text).toBe(200);
      expect(o.ms).toBeLessThan(2_000);
    }

    // The gauge and the counter, while the burst holds its slots.
    const during = await metrics();
    expect(sample(during, 'gatehouse_gateway_provider_requests_in_flight{provider="local"}')).toBe(64);
    expect(sample(during, 'gatehouse_gateway_refusals_total{reason="in_flight_per_key"}')).toBe(86);

    letAnswer();
    const results = await Promise.all(burst);
    expect(results.filter((r) => r.status === 200)).toHaveLength(64);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(86);
    expect(results.some((r) => r.status >= 500)).toBe(false);
    for (const r of refused) {
      expect(r.retryAfter).toBe("1");
      const e = JSON.parse(r.text) as { error: { code: number; message: string; metadata: unknown } };
      expect(e.error.code).toBe(429);
      expect(e.error.metadata).toEqual({
        limit: "in_flight_per_key",
        max: 64,
        in_flight: 64,
        retry_after_seconds: 1,
      });
    }
    // Refused before anything was forwarded: the provider saw only the 64 (and the others' 3).
    expect(forwarded("slow")).toBe(64);

    // Slots given back: the key is served again, nothing is left counted.
    expect(limits().ofKey(hashA)).toBe(0);
    expect(providerInFlight("local")).toBe(0);
    const again = await post(k.a, "local/quick", true);
    expect(again.status, again.text).toBe(200);
    const after = await metrics();
    expect(sample(after, 'gatehouse_gateway_provider_requests_in_flight{provider="local"}')).toBe(0);
  });

  it("one workspace holds at most 75 % of a provider's connections: its excess is 429, other workspaces are served, fallbacks go elsewhere", async () => {
    let ended = 0;
    const burst = [k.a, k.a2].flatMap((key) =>
      Array.from({ length: 4 }, (_, i) =>
        post(key, "small/slow", i % 2 === 0).then((r) => {
          ended++;
          return r;
        }),
      ),
    );
    await waitFor(() => ended === 2 && forwarded("slow-small") === 6, 5_000, "6 forwarded, 2 refused");

    const [otherWorkspace, otherOrg, fallback] = await Promise.all([
      post(k.otherWorkspace, "small/quick"),
      post(k.otherOrg, "small/quick", true),
      // The workspace's share of `small` is in use: its model's other provider serves it.
      post(k.a, "any/quick"),
    ]);
    for (const o of [otherWorkspace, otherOrg, fallback]) {
      expect(o.status, o.text).toBe(200);
      expect(o.ms).toBeLessThan(2_000);
    }
    expect((JSON.parse(fallback.text) as { provider: string }).provider).toBe("local");
    const refusedNow = await post(k.a2, "small/quick");
    expect(refusedNow.status).toBe(429);

    letAnswer();
    const results = await Promise.all(burst);
    expect(results.filter((r) => r.status === 200)).toHaveLength(6);
    const refused = [...results.filter((r) => r.status === 429), refusedNow];
    expect(refused).toHaveLength(3);
    expect(results.some((r) => r.status >= 500)).toBe(false);
    for (const r of refused) {
      expect(r.retryAfter).toBe("1");
      expect((JSON.parse(r.text) as { error: { metadata: unknown } }).error.metadata).toEqual({
        limit: "in_flight_per_workspace_provider",
        provider: "small",
        max: 6,
        in_flight: 6,
        retry_after_seconds: 1,
      });
    }
    expect(
      sample(await metrics(), 'gatehouse_gateway_refusals_total{reason="in_flight_per_workspace_provider"}'),
    ).toBe(3);
    expect(providerInFlight("small")).toBe(0);
    expect(limits().ofWorkspace("small", s.workspaceId)).toBe(0);
    expect((await post(k.a, "small/quick")).status).toBe(200);
  });

  it("the refusals counter also counts holds refused by the key's limit (key_limit)", async () => {
    const created = await s.call({
      method: "POST",
      url: "/api/v1/keys",
      payload: { name: "tiny", limit: 0.000001 },
    });
    const tiny = created.json<{ key: string }>().key;
    const before = sample(await metrics(), 'gatehouse_gateway_refusals_total{reason="key_limit"}');
    const r = await post(tiny, "local/quick");
    expect(r.status, r.text).toBe(402);
    const after = await metrics();
    expect(sample(after, 'gatehouse_gateway_refusals_total{reason="key_limit"}')).toBe(
      (Number.isNaN(before) ? 0 : before) + 1,
    );
  });

  it("slots are given back however a request ends: upstream error, invalid request, client leaving before or during the answer", async () => {
    // An upstream failure (502) and a request refused before any attempt (400).
    expect((await post(k.a, "local/error")).status).toBe(502);
    expect((await post(k.a, "local/error", true)).status).toBe(502);
    expect((await post(k.a, "nobody/model")).status).toBe(400);
    expect(limits().ofKey(hashA)).toBe(0);

    // Clients that leave: a stream before its first byte, a stream mid-answer, a whole answer.
    const leaveBefore = send(k.a, "local/slow", true);
    const leaveWhole = send(k.a, "local/slow", false);
    const leftDuring = leaveStreamAfter(
      s.baseUrl,
      k.a,
      { model: "local/slow-body", messages: [{ role: "user", content: "hi" }], stream: true },
      1,
    );
    await waitFor(
      () => forwarded("slow") === 2 && forwarded("slow-body") === 1,
      5_000,
      "three requests upstream",
    );
    await leftDuring;
    leaveBefore.destroy();
    leaveWhole.destroy();
    // The streams end when their clients go; the whole answer once the upstream has answered.
    await waitFor(() => limits().ofKey(hashA) === 1, 5_000, "the streams' slots back");
    letAnswer();
    await waitFor(() => limits().ofKey(hashA) === 0, 5_000, "the whole answer's slot back");
    expect(providerInFlight("local")).toBe(0);
    await s.app.gateway.recorder.settled();
  });
});

describe("fair use at shutdown", () => {
  it("requests cancelled by a shutdown give their slots back", async () => {
    closeGate();
    const upstream = await startProvider();
    const file = writeProvidersFile(
      [
        {
          slug: "local",
          kind: "openai-compatible",
          base_url: `${upstream.url}/v1`,
          api_key: "sk-fake-local",
        },
      ],
      [
        {
          id: "local/slow",
          provider: "local",
          upstream_model: "slow",
          prompt_price: 0.000001,
          completion_price: 0.000002,
        },
      ],
    );
    const s = await startListening({
      env: { GATEHOUSE_PROVIDERS_FILE: file.path, GATEHOUSE_SHUTDOWN_GRACE_MS: "100" },
    });
    try {
      const created = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "shut" } });
      const { key, data } = created.json<{ key: string; data: { hash: string } }>();
      const send = (stream: boolean) =>
        fetch(`${s.baseUrl}/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "local/slow", messages: [{ role: "user", content: "hi" }], stream }),
        })
          .then((r) => r.text())
          .catch(() => null);
      const sent = [send(true), send(false), send(true)];
      await waitFor(() => upstream.requests.length === 3, 5_000, "three requests upstream");
      const limits = s.app.gateway.limits;
      expect(limits.ofKey(data.hash)).toBe(3);
      await s.close();
      expect(limits.ofKey(data.hash)).toBe(0);
      expect([...limits.byProvider()].every((p) => p.inFlight === 0)).toBe(true);
      await Promise.all(sent);
    } finally {
      letAnswer();
      await upstream.close();
      file.remove();
    }
  });
});
