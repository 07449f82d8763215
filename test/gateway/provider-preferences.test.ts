import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { startRoutedUpstream, USAGE, type RoutedUpstream } from "../helpers/fake-upstreams/routed.js";
import { writeProvidersFile, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Provider preferences (`provider.order`, `only`, `ignore`, `allow_fallbacks`; docs/gateway.md,
 * src/gateway/chat/attempts.ts) through a real listening gateway: one model served by three
 * providers, each a path of one local fake upstream, each at its own price. What is checked is
 * what a client and an operator can see: the answer's `provider`, the generation record (its
 * provider and each attempt's status), the cost charged (the serving endpoint's price) and which
 * providers the upstream heard from, in which order.
 */
const PROVIDERS = [
  // What each endpoint of multi/chat honours: alpha and beta say so in the file (max_tokens is
  // added to every list); gamma has the openai-compatible kind's defaults.
  { slug: "alpha", name: "Alpha Cloud", prompt: 0.000001, completion: 0.000002, params: ["temperature"] },
  {
    slug: "beta",
    name: "Beta AI",
    prompt: 0.000003,
    completion: 0.000004,
    params: ["temperature", "seed", "top_k", "tools"],
  },
  { slug: "gamma", name: "Gamma", prompt: 0.000005, completion: 0.000006, params: undefined },
] as const;
type Slug = (typeof PROVIDERS)[number]["slug"];
const P = Object.fromEntries(PROVIDERS.map((p) => [p.slug, p])) as Record<Slug, (typeof PROVIDERS)[number]>;
/** What the fake upstream's usage costs at a provider's prices. */
const costAt = (slug: Slug) =>
  USAGE.prompt_tokens * P[slug].prompt + USAGE.completion_tokens * P[slug].completion;

let upstream: RoutedUpstream;
let file: WrittenProvidersFile;
let s: ListeningApp;
let key: string;

beforeAll(async () => {
  upstream = await startRoutedUpstream();
  file = writeProvidersFile(
    PROVIDERS.map((p) => ({
      slug: p.slug,
      name: p.name,
      kind: "openai-compatible",
      base_url: upstream.baseUrl(p.slug),
      api_key: `sk-${p.slug}-platform`,
      timeout_ms: 5_000,
    })),
    [
      // One model, three providers, in file order: alpha is the default route.
      ...PROVIDERS.map((p) => ({
        id: "multi/chat",
        provider: p.slug,
        upstream_model: `${p.slug}-chat`,
        prompt_price: p.prompt,
        completion_price: p.completion,
        ...(p.params ? { supported_parameters: [...p.params] } : {}),
      })),
      // The same three providers in the opposite order: the dearest first. Beta's endpoint has
      // the longest context, which is the model's context_length on /models.
      ...[...PROVIDERS].reverse().map((p) => ({
        id: "reversed/chat",
        provider: p.slug,
        upstream_model: `${p.slug}-chat`,
        prompt_price: p.prompt,
        completion_price: p.completion,
        ...(p.slug === "beta" ? { context_length: 32768 } : {}),
      })),
      // Models with one provider each, for `models` fallbacks.
      {
        id: "solo/alpha",
        provider: "alpha",
        upstream_model: "alpha-solo",
        prompt_price: P.alpha.prompt,
        completion_price: P.alpha.completion,
        supported_parameters: ["temperature"],
      },
      {
        id: "solo/gamma",
        provider: "gamma",
        upstream_model: "gamma-solo",
        prompt_price: P.gamma.prompt,
        completion_price: P.gamma.completion,
        name: "Gamma Solo: Long Context",
        context_length: 200_000,
      },
      // For GET /models' filters: an author that is no provider, prompt dear and completion cheap.
      {
        id: "acme/summarizer",
        provider: "beta",
        upstream_model: "beta-summarizer",
        name: "Acme Summarizer",
        prompt_price: 0.000008,
        completion_price: 0.0000005,
        context_length: 131_072,
        supported_parameters: ["stop"],
      },
    ],
  );
  s = await startListening({ clock: systemClock, env: { GATEHOUSE_PROVIDERS_FILE: file.path } });
  const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "prefs", limit: 10 } });
  key = r.json<{ key: string }>().key;
});

afterAll(async () => {
  await s?.close();
  await upstream?.close();
  file?.remove();
});

afterEach(async () => {
  upstream.reset();
  // Every attempt's hold was settled or released: nothing is left holding money.
  await s.app.gateway.recorder.settled();
  expect(await s.app.gateway.holds.store.openCount()).toBe(0);
});

const usage = async (): Promise<number> =>
  (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>().data
    .usage;

interface Outcome {
  status: number;
  /** The answer's `provider` (a display name) and `model`, and its cost; for a stream, from its chunks. */
  provider?: string;
  model?: string;
  cost?: number;
  text?: string;
  error?: { code: number; message: string; metadata: Record<string, unknown> };
  id: string | null;
  /** Providers the upstream heard from, in order. */
  heard: string[];
}

/** POST /chat/completions with the test key: "Hi", max_tokens 20, then `body`; what it served. */
async function serve(body: Record<string, unknown>, stream = false): Promise<Outcome> {
  const r = await chat(s, key, { max_tokens: 20, stream, ...body });
  const heard = upstream.requests().map((q) => q.provider);
  const id = r.id;
  if (r.status !== 200) {
    return { status: r.status, error: (r.json as { error: Outcome["error"] }).error, id, heard };
  }
  if (!stream) {
    const b = r.json as Record<string, any>;
    return {
      status: 200,
      provider: b.provider,
      model: b.model,
      cost: b.usage.cost,
      text: b.choices[0].message.content,
      id: b.id,
      heard,
    };
  }
  const events = r.events;
  // Every chunk names the same provider and model.
  expect(new Set(events.map((e) => e.provider as string)).size).toBe(1);
  expect(new Set(events.map((e) => e.model as string)).size).toBe(1);
  return {
    status: 200,
    provider: events[0]!.provider,
    model: events[0]!.model,
    cost: events.find((e) => e.usage)!.usage.cost,
    text: events.map((e) => (e.choices[0]?.delta?.content as string | undefined) ?? "").join(""),
    id: events[0]!.id,
    heard,
  };
}

async function generation(id: string) {
  const r = await s.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
  expect(r.statusCode, r.body).toBe(200);
  return r.json<{ data: Record<string, any> }>().data;
}

/** A 200 served by `slug` for `model`: the answer, the generation record and the charge agree. */
async function expectServedBy(o: Outcome, slug: Slug, statuses: (number | null)[], model = "multi/chat") {
  expect(o.status, JSON.stringify(o.error)).toBe(200);
  expect(o.provider).toBe(P[slug].name);
  expect(o.model).toBe(model);
  expect(o.text).toBe(`Served by ${slug}.`);
  expect(o.cost).toBeCloseTo(costAt(slug), 15);
  expect(o.heard.at(-1)).toBe(slug);
  const g = await generation(o.id!);
  expect(g.provider_name).toBe(P[slug].name);
  expect(g.model).toBe(model);
  expect(g.usage).toBeCloseTo(costAt(slug), 15);
  expect(g.provider_responses.map((p: { status: number | null }) => p.status)).toEqual(statuses);
}

describe("without preferences", () => {
  it("the model's first endpoint in file order serves; only it is called", async () => {
    const before = await usage();
    const o = await serve({ model: "multi/chat" });
    await expectServedBy(o, "alpha", [200]);
    expect(o.heard).toEqual(["alpha"]);
    // The upstream got the endpoint's model name and the provider's own key.
    const [q] = upstream.requests();
    expect(q!.model).toBe("alpha-chat");
    expect(q!.authorization).toBe("Bearer sk-alpha-platform");
    expect(await usage()).toBeCloseTo(before + costAt("alpha"), 12);
  });

  for (const stream of [false, true]) {
    it(`a failing first provider (429, then 500/503) falls back to the next provider of the same model (${stream ? "stream" : "full"})`, async () => {
      upstream.setMode("alpha", 429);
      const before = await usage();
      const o = await serve({ model: "multi/chat" }, stream);
      await expectServedBy(o, "beta", [429, 200]);
      expect(o.heard).toEqual(["alpha", "beta"]);
      // Only the serving attempt is charged, at its own endpoint's price.
      expect(await usage()).toBeCloseTo(before + costAt("beta"), 12);
      upstream.reset();

      upstream.setMode("alpha", 500);
      upstream.setMode("beta", 503);
      const o2 = await serve({ model: "multi/chat" }, stream);
      await expectServedBy(o2, "gamma", [500, 503, 200]);
      expect(o2.heard).toEqual(["alpha", "beta", "gamma"]);
    });
  }

  it("every provider failing: the last attempt's status, nothing charged", async () => {
    for (const p of PROVIDERS) upstream.setMode(p.slug, p.slug === "gamma" ? 429 : 500);
    const before = await usage();
    const o = await serve({ model: "multi/chat" });
    expect(o.status).toBe(429);
    expect(o.heard).toEqual(["alpha", "beta", "gamma"]);
    expect(await usage()).toBe(before);
  });

  it("a failure that another provider would not fix (400, 401) does not fall back", async () => {
    for (const mode of [400, 401] as const) {
      upstream.reset();
      upstream.setMode("alpha", mode);
      const o = await serve({ model: "multi/chat" });
      expect(o.status).not.toBe(200);
      expect(o.error!.metadata.provider_status).toBe(mode);
      expect(o.heard).toEqual(["alpha"]);
    }
  });
});

describe("order", () => {
  it("puts the named providers first, in that order; by slug or display name, any case", async () => {
    await expectServedBy(
      await serve({ model: "multi/chat", provider: { order: ["gamma"] } }),
      "gamma",
      [200],
    );
    upstream.reset();
    await expectServedBy(
      await serve({ model: "multi/chat", provider: { order: ["BETA AI", "gamma"] } }),
      "beta",
      [200],
    );
  });

  it("falls back through the ordered providers, then the others in file order", async () => {
    upstream.setMode("gamma", 500);
    upstream.setMode("beta", 429);
    const o = await serve({ model: "multi/chat", provider: { order: ["gamma", "beta"] } });
    await expectServedBy(o, "alpha", [500, 429, 200]);
    expect(o.heard).toEqual(["gamma", "beta", "alpha"]);
  });

  it("a provider that does not serve the model is ignored", async () => {
    const o = await serve({ model: "multi/chat", provider: { order: ["no-such-provider", "beta"] } });
    await expectServedBy(o, "beta", [200]);
  });
});

describe("allow_fallbacks: false", () => {
  it("without order: only the model's first endpoint; its failure is the answer", async () => {
    upstream.setMode("alpha", 429);
    const before = await usage();
    const o = await serve({ model: "multi/chat", provider: { allow_fallbacks: false } });
    expect(o.status).toBe(429);
    expect(o.heard).toEqual(["alpha"]);
    expect(await usage()).toBe(before);
    // The same request with fallbacks allowed is served by the next provider.
    upstream.reset();
    upstream.setMode("alpha", 429);
    await expectServedBy(
      await serve({ model: "multi/chat", provider: { allow_fallbacks: true } }),
      "beta",
      [429, 200],
    );
  });

  it("with order: only the ordered providers, in that order; never another", async () => {
    upstream.setMode("beta", 500);
    const o = await serve({
      model: "multi/chat",
      provider: { order: ["beta", "gamma"], allow_fallbacks: false },
    });
    await expectServedBy(o, "gamma", [500, 200]);
    expect(o.heard).toEqual(["beta", "gamma"]);
    upstream.reset();
    upstream.setMode("beta", 500);
    upstream.setMode("gamma", 503);
    const o2 = await serve({
      model: "multi/chat",
      provider: { order: ["beta", "gamma"], allow_fallbacks: false },
    });
    expect(o2.status).toBe(503);
    // alpha serves the model and is healthy, but it was not in order.
    expect(o2.heard).toEqual(["beta", "gamma"]);
  });

  it("is per model: the next model of `models` is still tried", async () => {
    upstream.setMode("alpha", 429);
    const o = await serve({ models: ["multi/chat", "solo/gamma"], provider: { allow_fallbacks: false } });
    await expectServedBy(o, "gamma", [429, 200], "solo/gamma");
    expect(o.heard).toEqual(["alpha", "gamma"]);
  });
});

describe("only and ignore", () => {
  it("only: no other provider is ever called, even when the allowed ones fail", async () => {
    await expectServedBy(await serve({ model: "multi/chat", provider: { only: ["Gamma"] } }), "gamma", [200]);
    upstream.reset();
    upstream.setMode("beta", 500);
    const o = await serve({ model: "multi/chat", provider: { only: ["beta", "gamma"] } });
    await expectServedBy(o, "gamma", [500, 200]);
    expect(o.heard).toEqual(["beta", "gamma"]);
    upstream.reset();
    upstream.setMode("beta", 500);
    const o2 = await serve({ model: "multi/chat", provider: { only: ["beta"] } });
    expect(o2.status).toBe(502);
    expect(o2.heard).toEqual(["beta"]);
  });

  it("ignore: the named providers are never called", async () => {
    upstream.setMode("beta", 429);
    const o = await serve({ model: "multi/chat", provider: { ignore: ["ALPHA"] } });
    await expectServedBy(o, "gamma", [429, 200]);
    expect(o.heard).toEqual(["beta", "gamma"]);
    upstream.reset();
    await expectServedBy(
      await serve({ model: "multi/chat", provider: { ignore: ["alpha cloud", "gamma"] } }),
      "beta",
      [200],
    );
  });

  it("only with order: order ranks within what only allows", async () => {
    const o = await serve({
      model: "multi/chat",
      provider: { only: ["alpha", "gamma"], order: ["gamma", "beta"] },
    });
    await expectServedBy(o, "gamma", [200]);
  });

  it("apply to every model of `models`: a model with no allowed provider is skipped", async () => {
    const o = await serve({ models: ["solo/alpha", "multi/chat"], provider: { ignore: ["alpha"] } });
    await expectServedBy(o, "beta", [200]);
    expect(o.heard).toEqual(["beta"]);
  });

  it("excluding every provider is 400 naming provider; nothing reaches an upstream", async () => {
    for (const provider of [{ only: ["nobody"] }, { ignore: ["alpha", "beta", "gamma"] }]) {
      const o = await serve({ model: "multi/chat", provider });
      expect(o.status).toBe(400);
      expect(o.error!.message).toMatch(/^provider: /);
      expect(o.heard).toEqual([]);
    }
  });
});

describe("require_parameters", () => {
  it("routes only to endpoints that honour every parameter; by default one that lacks it still serves", async () => {
    // seed: alpha lacks it, beta has it.
    const strict = await serve({ model: "multi/chat", seed: 7, provider: { require_parameters: true } });
    await expectServedBy(strict, "beta", [200]);
    expect(strict.heard).toEqual(["beta"]);
    upstream.reset();
    // Without it (or false), the first endpoint serves and the parameter goes along as sent.
    for (const provider of [undefined, { require_parameters: false }]) {
      const loose = await serve({ model: "multi/chat", seed: 7, ...(provider ? { provider } : {}) });
      await expectServedBy(loose, "alpha", [200]);
      expect(upstream.requests().at(-1)!.raw.body).toMatchObject({ seed: 7 });
    }
  });

  it("checks the kind's defaults, aliases and every model of `models`; streams too", async () => {
    // top_k: only beta lists it (gamma's openai-compatible defaults do not).
    const topK = await serve(
      { model: "multi/chat", top_k: 5, provider: { require_parameters: true, order: ["gamma"] } },
      true,
    );
    await expectServedBy(topK, "beta", [200]);
    upstream.reset();
    // A json_schema response format needs structured_outputs too: only gamma (the defaults) has both.
    const schema = await serve({
      models: ["solo/alpha", "multi/chat"],
      response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } },
      provider: { require_parameters: true },
    });
    await expectServedBy(schema, "gamma", [200]);
    expect(schema.heard).toEqual(["gamma"]);
    // max_completion_tokens is max_tokens, which every endpoint honours; null asks for nothing, and
    // so do logprobs: false and reasoning that is only hidden or off (Gatehouse hides it itself).
    for (const extra of [
      {},
      { logprobs: false, include_reasoning: false },
      { reasoning: { exclude: true } },
      { reasoning: { enabled: false, effort: "high" } },
      { reasoning: { effort: "none" } },
    ]) {
      const plain = await serve({
        model: "solo/alpha",
        max_completion_tokens: 10,
        seed: null,
        tools: [],
        ...extra,
        provider: { require_parameters: true },
      });
      await expectServedBy(plain, "alpha", [200], "solo/alpha");
      upstream.reset();
    }
    // Reasoning that asks for effort does need an endpoint that takes it: alpha does not.
    const thinks = await serve({
      model: "solo/alpha",
      reasoning: { effort: "high", exclude: true },
      provider: { require_parameters: true },
    });
    expect(thinks.status).toBe(404);
  });

  it("no endpoint honours them all: 404 naming the parameters and what each endpoint lacks; nothing sent or charged", async () => {
    const before = await usage();
    const o = await serve({
      model: "multi/chat",
      top_k: 3,
      logprobs: true,
      provider: { require_parameters: true },
    });
    expect(o.status).toBe(404);
    expect(o.error!.message).toMatch(/^provider\.require_parameters: /);
    expect(o.error!.message).toContain("(max_tokens, top_k, logprobs)");
    expect(o.error!.message).toContain("multi/chat on alpha lacks top_k, logprobs");
    expect(o.error!.message).toContain("multi/chat on beta lacks logprobs");
    expect(o.error!.message).toContain("multi/chat on gamma lacks top_k");
    expect(o.error!.metadata).toMatchObject({ parameters: ["max_tokens", "top_k", "logprobs"] });
    expect(o.heard).toEqual([]);
    expect(await usage()).toBe(before);
  });
});

describe("GET /models: supported_parameters", () => {
  interface Listed {
    id: string;
    supported_parameters: string[];
    endpoints: { provider: string; supported_parameters: string[] }[];
  }
  const list = async (query = ""): Promise<Listed[]> => {
    const r = await fetch(`${s.baseUrl}/models${query}`);
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: Listed[] }).data;
  };

  it("per endpoint, and the model's list is their union in one order", async () => {
    const multi = (await list()).find((m) => m.id === "multi/chat")!;
    expect(multi.endpoints.map((e) => [e.provider, e.supported_parameters])).toEqual([
      ["alpha", ["max_tokens", "temperature"]],
      ["beta", ["max_tokens", "temperature", "top_k", "seed", "tools"]],
      [
        "gamma",
        [
          "max_tokens",
          "temperature",
          "top_p",
          "stop",
          "frequency_penalty",
          "presence_penalty",
          "seed",
          "logit_bias",
          "logprobs",
          "top_logprobs",
          "response_format",
          "structured_outputs",
          "tools",
          "tool_choice",
          "parallel_tool_calls",
        ],
      ],
    ]);
    expect(multi.supported_parameters).toEqual([
      "max_tokens",
      "temperature",
      "top_p",
      "top_k",
      "stop",
      "frequency_penalty",
      "presence_penalty",
      "seed",
      "logit_bias",
      "logprobs",
      "top_logprobs",
      "response_format",
      "structured_outputs",
      "tools",
      "tool_choice",
      "parallel_tool_calls",
    ]);
    // The built-in mock only honours max_tokens: it claims nothing else.
    expect((await list()).find((m) => m.id === "mock/echo")!.supported_parameters).toEqual(["max_tokens"]);
  });

  it("the filter keeps models with one endpoint that honours every listed parameter (the SDK's encoding too)", async () => {
    const ids = async (q: string) => (await list(q)).map((m) => m.id);
    expect(await ids("?supported_parameters=temperature")).toEqual([
      "multi/chat",
      "reversed/chat",
      "solo/alpha",
      "solo/gamma",
    ]);
    expect(await ids("?supported_parameters=top_k%2Cseed")).toEqual(["multi/chat"]);
    // top_k is beta's and logprobs gamma's: no one endpoint has both.
    expect(await ids("?supported_parameters=top_k,logprobs")).toEqual([]);
    expect(await ids("?supported_parameters=no_such_thing")).toEqual([]);
    expect(await ids("?supported_parameters=")).toContain("mock/echo");
    const sdk = await s.sdk(key).models.list({ supportedParameters: "top_k,seed" });
    expect(sdk.result.data.map((m) => m.id)).toEqual(["multi/chat"]);
    expect(sdk.result.totalCount).toBe(1);
  });
});

describe("GET /models: search, filters, sort and paging (docs/wire-compatibility.md, Model list)", () => {
  /*
   * What /models shows of each model (prices in USD per million tokens: prompt, completion; the
   * first endpoint's), and what the filters look at:
   *   acme/summarizer  8 / 0.5  context 131072  beta
   *   mock/echo        1 / 2    context 8192    mock        (mock/unavailable alike)
   *   multi/chat       1 / 2    context 8192    alpha, beta, gamma
   *   reversed/chat    5 / 6    context 32768   gamma, beta, alpha (beta's endpoint is the longest)
   *   solo/alpha       1 / 2    context 8192    alpha
   *   solo/gamma       5 / 6    context 200000  gamma, named "Gamma Solo: Long Context"
   */
  const ALL = [
    "acme/summarizer",
    "mock/echo",
    "mock/unavailable",
    "multi/chat",
    "reversed/chat",
    "solo/alpha",
    "solo/gamma",
  ];
  interface Page {
    data: { id: string; context_length: number; pricing: { prompt: string; completion: string } }[];
    total_count: number;
  }
  const page = async (query: string, path = "/models", auth?: string): Promise<Page> => {
    const r = await fetch(
      `${s.baseUrl}${path}${query}`,
      auth ? { headers: { authorization: `Bearer ${auth}` } } : {},
    );
    expect(r.status, await r.clone().text()).toBe(200);
    return (await r.json()) as Page;
  };
  const ids = async (query: string) => (await page(query)).data.map((m) => m.id);
  const count = async (query: string) => {
    const r = await fetch(`${s.baseUrl}/models/count${query}`);
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: { count: number } }).data.count;
  };

  it("q: case-insensitive text in the id, the name or the description", async () => {
    expect(await ids("?q=SUMMAR")).toEqual(["acme/summarizer"]);
    // In the name only (the id is solo/gamma).
    expect(await ids("?q=long%20context")).toEqual(["solo/gamma"]);
    // In the description only: the mock's, and the providers a model's description names.
    expect(await ids("?q=built-in%20MOCK%20model")).toEqual(["mock/echo", "mock/unavailable"]);
    expect(await ids("?q=served%20by%20beta")).toEqual(["acme/summarizer"]);
    expect(await ids("?q=no-such-model")).toEqual([]);
    expect(await ids("?q=")).toEqual(ALL);
    const sdk = await s.sdk(key).models.list({ q: "Chat" });
    expect(sdk.result.data.map((m) => m.id)).toEqual(["multi/chat", "reversed/chat"]);
    expect(sdk.result.totalCount).toBe(2);
  });

  it("providers, model_authors and input_modalities: comma lists, a model matches when it has any of them", async () => {
    expect(await ids("?providers=gamma")).toEqual(["multi/chat", "reversed/chat", "solo/gamma"]);
    // A provider's display name or slug, any case; the SDK's encoding of the comma too.
    expect(await ids("?providers=beta%20ai%2CMOCK")).toEqual([
      "acme/summarizer",
      "mock/echo",
      "mock/unavailable",
      "multi/chat",
      "reversed/chat",
    ]);
    expect(await ids("?providers=nobody")).toEqual([]);
    // The author is the id before the slash: alpha serves models but wrote none.
    expect(await ids("?model_authors=solo,ACME")).toEqual(["acme/summarizer", "solo/alpha", "solo/gamma"]);
    expect(await ids("?model_authors=alpha")).toEqual([]);
    // Every model here takes text: a list with text (or `all`) keeps them all, one without none.
    expect(await ids("?input_modalities=image")).toEqual([]);
    expect(await ids("?input_modalities=image,text")).toEqual(ALL);
    expect(await ids("?input_modalities=all")).toEqual(ALL);
    // Filters combine.
    expect(await ids("?providers=alpha&model_authors=solo,multi&q=chat")).toEqual(["multi/chat"]);
    const sdk = await s
      .sdk(key)
      .models.list({ providers: "gamma", modelAuthors: "solo,reversed", inputModalities: "text" });
    expect(sdk.result.data.map((m) => m.id)).toEqual(["reversed/chat", "solo/gamma"]);
    expect(await ids("?input_modalities=audio&providers=gamma")).toEqual([]);
  });

  it("context is the least context_length; the price bounds are USD per million tokens of the prices shown", async () => {
    // reversed/chat's longest endpoint (32768) is its context_length: exactly at the bound counts.
    expect(await ids("?context=32768")).toEqual(["acme/summarizer", "reversed/chat", "solo/gamma"]);
    expect(await ids("?context=200001")).toEqual([]);
    expect(await ids("?context=0")).toEqual(ALL);
    // min_price/max_price bound the prompt price, inclusive; 1 USD per million is "0.000001".
    const cheap = await page("?max_price=1");
    expect(cheap.data.map((m) => m.id)).toEqual([
      "mock/echo",
      "mock/unavailable",
      "multi/chat",
      "solo/alpha",
    ]);
    for (const m of cheap.data) expect(m.pricing.prompt).toBe("0.000001");
    expect(await ids("?min_price=5")).toEqual(["acme/summarizer", "reversed/chat", "solo/gamma"]);
    expect(await ids("?min_price=5&max_price=6")).toEqual(["reversed/chat", "solo/gamma"]);
    expect(await ids("?max_price=0.999")).toEqual([]);
    // min_output_price/max_output_price bound the completion price: acme's is 0.5 per million.
    expect(await ids("?max_output_price=0.5")).toEqual(["acme/summarizer"]);
    expect(await ids("?min_output_price=2&max_output_price=2")).toEqual([
      "mock/echo",
      "mock/unavailable",
      "multi/chat",
      "solo/alpha",
    ]);
    expect(await ids("?min_output_price=6.0")).toEqual(["reversed/chat", "solo/gamma"]);
    const sdk = await s.sdk(key).models.list({ context: 100_000, minPrice: 7.5, maxOutputPrice: 1 });
    expect(sdk.result.data.map((m) => m.id)).toEqual(["acme/summarizer"]);
    expect(sdk.result.data[0]!.pricing).toMatchObject({ prompt: "0.000008", completion: "0.0000005" });
  });

  it("sort: the pricing and context orders, ties in id order; newest and orders with no data keep the id order", async () => {
    // Prompt plus completion: 3 (the four at 1 and 2), 8.5 (acme), 11 (reversed/chat, solo/gamma).
    const lowToHigh = [
      "mock/echo",
      "mock/unavailable",
      "multi/chat",
      "solo/alpha",
      "acme/summarizer",
      "reversed/chat",
      "solo/gamma",
    ];
    expect(await ids("?sort=pricing-low-to-high")).toEqual(lowToHigh);
    expect(await ids("?sort=pricing-high-to-low")).toEqual([
      "reversed/chat",
      "solo/gamma",
      "acme/summarizer",
      "mock/echo",
      "mock/unavailable",
      "multi/chat",
      "solo/alpha",
    ]);
    expect(await ids("?sort=context-high-to-low")).toEqual([
      "solo/gamma",
      "acme/summarizer",
      "reversed/chat",
      "mock/echo",
      "mock/unavailable",
      "multi/chat",
      "solo/alpha",
    ]);
    // Every model's `created` is the same here; popularity and benchmarks are not kept.
    for (const sort of ["newest", "most-popular", "intelligence-high-to-low", "some-future-order"]) {
      expect(await ids(`?sort=${sort}`)).toEqual(ALL);
    }
    const sdk = await s.sdk(key).models.list({ sort: "pricing-low-to-high", providers: "gamma" });
    expect(sdk.result.data.map((m) => m.id)).toEqual(["multi/chat", "reversed/chat", "solo/gamma"]);
  });

  it("total_count, offset and limit count the filtered and sorted list; /models/count and /models/user filter alike", async () => {
    const p = await page("?sort=pricing-high-to-low&min_price=5&offset=1&limit=1");
    expect(p.data.map((m) => m.id)).toEqual(["solo/gamma"]);
    expect(p.total_count).toBe(3);
    // The SDK's pages keep the filters and the order.
    const ids: string[] = [];
    for await (const one of await s
      .sdk(key)
      .models.list({ providers: "gamma", sort: "context-high-to-low", limit: 1 })) {
      expect(one.result.totalCount).toBe(3);
      ids.push(...one.result.data.map((m) => m.id));
    }
    expect(ids).toEqual(["solo/gamma", "reversed/chat", "multi/chat"]);
    expect(await count("?providers=gamma")).toBe(3);
    expect(await count("?q=mock&context=8192&max_output_price=2")).toBe(2);
    expect(await count("?model_authors=acme&min_output_price=1")).toBe(0);
    expect(await count("")).toBe(ALL.length);
    const mine = await page("?model_authors=solo&offset=1", "/models/user", key);
    expect(mine.data.map((m) => m.id)).toEqual(["solo/gamma"]);
    expect(mine.total_count).toBe(2);
  });

  it("filters with no data here are accepted and do not filter; a bad value is 400 naming the parameter", async () => {
    expect(
      await ids(
        "?category=programming&arch=GPT&distillable=true&zdr=true&region=eu&min_age_days=1&max_intelligence_index=10&min_tool_success_rate=0.9",
      ),
    ).toEqual(ALL);
    const all = await s.sdk(key).models.list({ category: "programming", minCodingIndex: 50, maxAgeDays: 1 });
    expect(all.result.totalCount).toBe(ALL.length);
    for (const [query, message] of [
      ["min_price=cheap", "min_price: must be number"],
      ["max_price=-1", "max_price: must be >= 0"],
      ["min_output_price=", "min_output_price: must be number"],
      ["max_output_price=1,2", "max_output_price: must be number"],
      ["context=-1", "context: must be >= 0"],
      ["context=1.5", "context: must be integer"],
      ["context=lots", "context: must be integer"],
      ["min_intelligence_index=high", "min_intelligence_index: must be number"],
    ] as const) {
      for (const path of ["/models", "/models/count"]) {
        const r = await fetch(`${s.baseUrl}${path}?${query}`);
        expect(r.status, `${path}?${query}`).toBe(400);
        expect(await r.json()).toEqual({ error: { code: 400, message, metadata: null } });
      }
    }
    // The SDK maps the 400 of models.list to its BadRequestResponseError.
    const bad = s.sdk(key).models.list({ context: -1 });
    await expect(bad).rejects.toBeInstanceOf(errors.BadRequestResponseError);
    await expect(bad).rejects.toThrow(/context: must be >= 0/);
  });
});

describe("max_price (USD per million tokens) and sort: price", () => {
  it("max_price leaves out endpoints priced above it, before order applies; numbers or decimal strings", async () => {
    // gamma's prompt price is 5 USD per million tokens: over 4.
    const o = await serve({
      model: "multi/chat",
      provider: { order: ["gamma", "beta"], max_price: { prompt: "4" } },
    });
    await expectServedBy(o, "beta", [200]);
    expect(o.heard).toEqual(["beta"]);
    upstream.reset();
    // Exactly at the cap is within it (alpha: 1 and 2).
    const at = await serve({
      model: "reversed/chat",
      provider: { max_price: { prompt: 1, completion: "2.0" } },
    });
    await expectServedBy(at, "alpha", [200], "reversed/chat");
    expect(at.heard).toEqual(["alpha"]);
  });

  it("nothing within it: 404 naming provider.max_price, nothing sent or charged; a bad value is 400 naming the field", async () => {
    const before = await usage();
    const o = await serve({ model: "multi/chat", provider: { max_price: { completion: 1.5 } } });
    expect(o.status).toBe(404);
    expect(o.error!.message).toMatch(
      /^provider\.max_price: no endpoint .*multi\/chat on alpha; multi\/chat on beta; multi\/chat on gamma cost more/,
    );
    expect(o.heard).toEqual([]);
    expect(await usage()).toBe(before);
    for (const [max_price, field] of [
      [{ prompt: "cheap" }, "provider.max_price.prompt"],
      [{ completion: "-1" }, "provider.max_price.completion"],
      [{ prompt: -1 }, "provider.max_price.prompt"],
    ] as const) {
      const bad = await serve({ model: "multi/chat", provider: { max_price } });
      expect(bad.status).toBe(400);
      expect(bad.error!.message).toContain(field.replace("provider.", ""));
      expect(bad.heard).toEqual([]);
    }
  });

  it("sort: price tries the cheapest first, then the next cheapest; order, when given, wins", async () => {
    const plain = await serve({ model: "reversed/chat" });
    await expectServedBy(plain, "gamma", [200], "reversed/chat");
    upstream.reset();
    upstream.setMode("alpha", 503);
    for (const sort of ["price", { by: "price" }]) {
      const cheap = await serve({ model: "reversed/chat", provider: { sort } });
      await expectServedBy(cheap, "beta", [503, 200], "reversed/chat");
      expect(cheap.heard).toEqual(["alpha", "beta"]);
      upstream.reset();
      upstream.setMode("alpha", 503);
    }
    const ordered = await serve({ model: "reversed/chat", provider: { sort: "price", order: ["gamma"] } });
    await expectServedBy(ordered, "gamma", [200], "reversed/chat");
  });
});
