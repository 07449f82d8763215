import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { buildFileProviders, loadProvidersFile } from "../../src/gateway/catalog/load-providers-file.js";
import { speaksNative } from "../../src/gateway/catalog/catalog.js";
import { ProvidersFileError, parseProvidersFile } from "../../src/gateway/catalog/providers-file.js";

const EXAMPLE = {
  providers: [
    {
      slug: "local",
      kind: "openai-compatible",
      base_url: "http://127.0.0.1:9000/v1",
      api_key_env: "LOCAL_KEY",
    },
  ],
  models: [
    {
      id: "local/tiny",
      provider: "local",
      upstream_model: "tiny",
      prompt_price: 0.000001,
      completion_price: 0.000002,
      context_length: 8192,
      max_completion_tokens: 1024,
    },
  ],
};

function problemsOf(file: unknown, env: Record<string, string> = {}): string[] {
  try {
    parseProvidersFile(typeof file === "string" ? file : JSON.stringify(file), env);
  } catch (err) {
    expect(err).toBeInstanceOf(ProvidersFileError);
    return (err as ProvidersFileError).problems;
  }
  throw new Error("expected a ProvidersFileError");
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-providers-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("providers file", () => {
  it("accepts the issue's example, with exact prices in nano-USD per million tokens", () => {
    const spec = parseProvidersFile(JSON.stringify(EXAMPLE), { LOCAL_KEY: "sk-local" });
    expect(spec.providers).toHaveLength(1);
    expect(spec.providers[0]).toMatchObject({
      slug: "local",
      kind: "openai-compatible",
      name: "local",
      baseUrl: "http://127.0.0.1:9000/v1",
      timeoutMs: null,
    });
    expect(spec.providers[0]!.apiKey!.reveal()).toBe("sk-local");
    expect(spec.models).toEqual([
      {
        id: "local/tiny",
        name: "local/tiny",
        kind: "chat",
        provider: "local",
        upstreamModel: "tiny",
        promptPricePerMTokNano: 1_000_000_000n,
        completionPricePerMTokNano: 2_000_000_000n,
        cacheReadPricePerMTokNano: null,
        cacheWritePricePerMTokNano: null,
        contextLength: 8192,
        maxCompletionTokens: 1024,
        supportedParameters: null,
      },
    ]);
  });

  it("prices are read as decimals, never through a float product", () => {
    const file = structuredClone(EXAMPLE);
    Object.assign(file.models[0]!, { prompt_price: 0.0000003, completion_price: "0.000000000000001" });
    const [m] = parseProvidersFile(JSON.stringify(file), { LOCAL_KEY: "k" }).models;
    expect(m!.promptPricePerMTokNano).toBe(300_000_000n); // 0.0000003 * 1e15 is 300000000.00000006 as a double
    expect(m!.completionPricePerMTokNano).toBe(1n);
  });

  it("reports every problem at once, each naming its field", () => {
    const problems = problemsOf(
      {
        providers: [
          {
            slug: "Bad Slug",
            kind: "grpc",
            base_url: "ftp://x",
            api_key: "sk-inline-secret",
            api_key_env: "X",
            extra: 1,
          },
          { slug: "a", kind: "anthropic", base_url: "https://api.anthropic.com" },
          {
            slug: "a",
            kind: "openai-compatible",
            base_url: "https://x",
            api_key_env: "MISSING_KEY",
            timeout_ms: 5,
            headers: { "bad header": "v" },
          },
          { slug: "mock", kind: "openai-compatible", base_url: "https://x" },
        ],
        models: [
          {
            id: "local/tiny",
            provider: "a",
            upstream_model: "tiny",
            completion_price: 0.000002,
            context_length: 8192,
            max_completion_tokens: 1024,
          },
          {
            id: "nope",
            provider: "ghost",
            upstream_model: "",
            prompt_price: -1,
            completion_price: "abc",
            context_length: 0,
            max_completion_tokens: 1.5,
          },
          {
            id: "x/y",
            provider: "a",
            upstream_model: "y",
            prompt_price: 2.5,
            completion_price: 1e-16,
            context_length: 100,
            max_completion_tokens: 200,
            colour: "red",
          },
          "not an object",
        ],
        extra: true,
      },
      {},
    );
    const expected = [
      "extra: unknown field",
      "providers[0].extra: unknown field",
      "providers[0].slug: must be 1 to 64 lowercase letters",
      "providers[0].kind: must be one of openai-compatible, anthropic",
      "providers[0].base_url: must be an http:// or https:// URL",
      "providers[0].api_key: give api_key or api_key_env, not both",
      "providers[1].api_key_env: required for kind anthropic",
      "providers[2].api_key_env: environment variable MISSING_KEY is not set",
      "providers[2].headers.bad header: is not a valid header name",
      "providers[2].timeout_ms: must be an integer number of milliseconds",
      'providers[3].slug: "mock" is the built-in provider\'s',
      "models[0].prompt_price: required (USD per token; a model without prices cannot be configured)",
      'models[1].provider: unknown provider "ghost"',
      'models[1].id: must look like "author/model"',
      "models[1].upstream_model: must be the model name the upstream knows",
      "models[1].prompt_price: must be a non-negative decimal number",
      "models[1].completion_price: must be a non-negative decimal number",
      "models[1].context_length: must be an integer from 1",
      "models[1].max_completion_tokens: must be an integer from 1",
      "models[2].colour: unknown field",
      "models[2].prompt_price: is USD per token: 2.5 is over 0.01",
      "models[2].completion_price: is finer than 1e-15 USD per token",
      "models[2].max_completion_tokens: must not exceed context_length",
      "models[3]: must be an object",
    ];
    for (const e of expected)
      expect(
        problems.some((p) => p.startsWith(e)),
        `${e}\n in ${problems.join("\n")}`,
      ).toBe(true);
    expect(problems.every((p) => /^[a-z_$]+(\[\d+\])?(\.[^:]+)?: /.test(p))).toBe(true);
    expect(problems.join("\n")).not.toContain("sk-inline-secret");
  });

  it("duplicates: a slug twice, a provider serving the same model twice", () => {
    const file = structuredClone(EXAMPLE);
    file.providers.push({ ...file.providers[0]! });
    file.models.push({ ...file.models[0]! });
    const problems = problemsOf(file, { LOCAL_KEY: "k" });
    expect(problems).toContain('providers[1].slug: duplicate "local" (also providers[0])');
    expect(problems).toContain('models[1].provider: "local" already serves "local/tiny" (models[0])');
  });

  it("the file itself: not JSON, not an object, no lists", () => {
    expect(problemsOf("{ nope")[0]).toMatch(/^not valid JSON: /);
    expect(problemsOf([])).toEqual(["(file): must be a JSON object with providers and models"]);
    expect(problemsOf({})).toEqual(["providers: required", "models: required"]);
  });

  it("one model served by several providers is one catalog entry, endpoints in file order", async () => {
    const spec = parseProvidersFile(
      JSON.stringify({
        providers: [
          {
            slug: "groq",
            kind: "openai-compatible",
            base_url: "https://api.groq.com/openai/v1",
            api_key: "gsk-1",
            name: "Groq",
          },
          {
            slug: "together",
            kind: "openai-compatible",
            base_url: "https://api.together.xyz/v1",
            api_key: "tg-1",
          },
        ],
        models: [
          {
            id: "meta-llama/llama-3.1-8b-instruct",
            name: "Llama 3.1 8B",
            provider: "together",
            upstream_model: "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo",
            prompt_price: 0.00000018,
            completion_price: 0.00000018,
            context_length: 131072,
            max_completion_tokens: 4096,
          },
          {
            id: "meta-llama/llama-3.1-8b-instruct",
            provider: "groq",
            upstream_model: "llama-3.1-8b-instant",
            prompt_price: 0.00000005,
            completion_price: 0.00000008,
            context_length: 131072,
            max_completion_tokens: 8192,
          },
        ],
      }),
      {},
    );
    const part = buildFileProviders(spec);
    expect(part.providers.map((p) => [p.slug, p.kind, p.name])).toEqual([
      ["groq", "openai-compatible", "Groq"],
      ["together", "openai-compatible", "together"],
    ]);
    expect(part.models).toHaveLength(1);
    expect(part.models[0]).toMatchObject({
      id: "meta-llama/llama-3.1-8b-instruct",
      name: "Llama 3.1 8B",
      isMock: false,
    });
    expect(
      part.models[0]!.endpoints.map((e) => [e.provider, e.upstreamModel, e.promptPricePerMTokNano]),
    ).toEqual([
      ["together", "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo", 180_000_000n],
      ["groq", "llama-3.1-8b-instant", 50_000_000n],
    ]);
    await Promise.all(part.providers.map((p) => p.adapter.close?.() ?? Promise.resolve()));
  });

  it("secrets never print: JSON, inspect, template strings", () => {
    const file = structuredClone(EXAMPLE) as any;
    file.providers[0].headers = { "x-tenant-token": "tenant-secret" };
    const spec = parseProvidersFile(JSON.stringify(file), { LOCAL_KEY: "sk-env-secret" });
    for (const shown of [
      JSON.stringify(spec, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)),
      inspect(spec, { depth: 10 }),
      String(spec.providers[0]!.apiKey),
    ]) {
      expect(shown).not.toContain("sk-env-secret");
      expect(shown).not.toContain("tenant-secret");
    }
    expect(spec.providers[0]!.headers.reveal()).toEqual({ "x-tenant-token": "tenant-secret" });
  });
});

describe("GATEHOUSE_PROVIDERS_FILE in the configuration", () => {
  it("a valid file is parsed with the rest of the configuration, keys read from the same environment", () => {
    const path = join(dir, "ok.json");
    writeFileSync(path, JSON.stringify(EXAMPLE));
    const config = loadConfig({ GATEHOUSE_PROVIDERS_FILE: path, LOCAL_KEY: "sk-local" });
    expect(config.providersFile!.models[0]!.id).toBe("local/tiny");
    expect(Object.isFrozen(config.providersFile)).toBe(true);
  });

  it("a bad or missing file stops the start with the file and the field in each line", () => {
    const path = join(dir, "bad.json");
    writeFileSync(path, JSON.stringify(EXAMPLE));
    let err: unknown;
    try {
      loadConfig({ GATEHOUSE_PROVIDERS_FILE: path, PORT: "x" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'PORT: must be an integer from 0 to 65535 (got "x")',
      `GATEHOUSE_PROVIDERS_FILE (${path}): providers[0].api_key_env: environment variable LOCAL_KEY is not set`,
    ]);
    expect(() => loadConfig({ GATEHOUSE_PROVIDERS_FILE: join(dir, "absent.json") })).toThrow(
      /GATEHOUSE_PROVIDERS_FILE \(.*absent\.json\): cannot read .*ENOENT/,
    );
  });
});

describe("loadProvidersFile", () => {
  it("max_tokens_field: one of the two fields, openai-compatible only", () => {
    const provider = (extra: Record<string, unknown>) => ({
      ...EXAMPLE,
      providers: [{ ...EXAMPLE.providers[0], ...extra }],
    });
    const ok = parseProvidersFile(JSON.stringify(provider({ max_tokens_field: "max_completion_tokens" })), {
      LOCAL_KEY: "k",
    });
    expect(ok.providers[0]!.maxTokensField).toBe("max_completion_tokens");
    expect(
      parseProvidersFile(JSON.stringify(EXAMPLE), { LOCAL_KEY: "k" }).providers[0]!.maxTokensField,
    ).toBeNull();
    expect(problemsOf(provider({ max_tokens_field: "max_new_tokens" }), { LOCAL_KEY: "k" })).toEqual([
      "providers[0].max_tokens_field: must be one of max_tokens, max_completion_tokens",
    ]);
    expect(
      problemsOf(provider({ kind: "anthropic", max_tokens_field: "max_tokens" }), { LOCAL_KEY: "k" }),
    ).toEqual([
      "providers[0].max_tokens_field: applies to kind openai-compatible only (Anthropic's is max_tokens)",
    ]);
  });

  it("connections: the provider's pool, an integer from 1 to 4096; absent: the default", () => {
    const provider = (extra: Record<string, unknown>) => ({
      ...EXAMPLE,
      providers: [{ ...EXAMPLE.providers[0], ...extra }],
    });
    const env = { LOCAL_KEY: "k" };
    expect(
      parseProvidersFile(JSON.stringify(provider({ connections: 8 })), env).providers[0]!.connections,
    ).toBe(8);
    expect(parseProvidersFile(JSON.stringify(EXAMPLE), env).providers[0]!.connections).toBeNull();
    for (const bad of [0, 4097, 2.5, "8"]) {
      expect(problemsOf(provider({ connections: bad }), env), String(bad)).toEqual([
        "providers[0].connections: must be an integer from 1 to 4096",
      ]);
    }
  });

  it("data_region and zdr: what guardrails route on; absent: global, and retention not ruled out", () => {
    const provider = (extra: Record<string, unknown>) => ({
      ...EXAMPLE,
      providers: [{ ...EXAMPLE.providers[0], ...extra }],
    });
    const env = { LOCAL_KEY: "k" };
    const parsed = parseProvidersFile(JSON.stringify(provider({ data_region: "europe", zdr: true })), env);
    expect(parsed.providers[0]).toMatchObject({ dataRegion: "europe", zdr: true });
    expect(parseProvidersFile(JSON.stringify(EXAMPLE), env).providers[0]).toMatchObject({
      dataRegion: "global",
      zdr: false,
    });
    expect(problemsOf(provider({ data_region: "eu", zdr: "yes" }), env)).toEqual([
      "providers[0].data_region: must be one of global, europe, us",
      "providers[0].zdr: must be true or false",
    ]);
  });

  it("responses: an openai-compatible provider that speaks the Responses API; default false; other kinds refused", () => {
    const provider = (extra: Record<string, unknown>) => ({
      ...EXAMPLE,
      providers: [{ ...EXAMPLE.providers[0], ...extra }],
    });
    const env = { LOCAL_KEY: "k" };
    const parsed = parseProvidersFile(JSON.stringify(provider({ responses: true })), env);
    expect(parsed.providers[0]!.responses).toBe(true);
    expect(parseProvidersFile(JSON.stringify(EXAMPLE), env).providers[0]!.responses).toBe(false);
    const part = buildFileProviders(parsed);
    expect(part.providers[0]!.responses).toBe(true);
    expect(speaksNative(part.providers[0]!, "openai-responses")).toBe(true);
    expect(speaksNative(part.providers[0]!, "anthropic")).toBe(false);
    const plain = buildFileProviders(parseProvidersFile(JSON.stringify(EXAMPLE), env)).providers[0]!;
    expect(speaksNative(plain, "openai-responses")).toBe(false);
    expect(problemsOf(provider({ responses: "yes" }), env)).toEqual([
      "providers[0].responses: must be true or false",
    ]);
    for (const responses of [true, false]) {
      expect(
        problemsOf(provider({ kind: "anthropic", api_key: "k", api_key_env: undefined, responses })),
      ).toEqual([
        "providers[0].responses: applies to kind openai-compatible only (the Responses API is OpenAI's)",
      ]);
    }
  });

  it("supported_parameters: known names only, max_tokens always in, the kind's defaults otherwise", async () => {
    const model = (extra: Record<string, unknown>, kind = "openai-compatible") => ({
      providers: [{ ...EXAMPLE.providers[0], kind, api_key: "k", api_key_env: undefined }],
      models: [{ ...EXAMPLE.models[0], ...extra }],
    });
    const listed = parseProvidersFile(
      JSON.stringify(model({ supported_parameters: ["tools", "seed", "tools"] })),
      {},
    );
    expect(listed.models[0]!.supportedParameters).toEqual(["max_tokens", "seed", "tools"]);
    expect(problemsOf(model({ supported_parameters: ["tools", "top-k", 3] }))).toEqual([
      "models[0].supported_parameters: must be a list of parameter names",
    ]);
    const [problem] = problemsOf(model({ supported_parameters: ["tools", "topk"] }));
    expect(problem).toMatch(
      /^models\[0\]\.supported_parameters: unknown parameter "topk" \(known: max_tokens, temperature, /,
    );
    expect(problemsOf(model({ supported_parameters: "tools" }))).toEqual([
      "models[0].supported_parameters: must be a list of parameter names",
    ]);
    // Not listed: what the provider's adapter honours.
    for (const [kind, has, lacks] of [
      ["openai-compatible", "response_format", "top_k"],
      ["anthropic", "top_k", "seed"],
    ] as const) {
      const part = buildFileProviders(parseProvidersFile(JSON.stringify(model({}, kind)), {}));
      const params = part.models[0]!.endpoints[0]!.supportedParameters;
      expect(params).toContain("max_tokens");
      expect(params).toContain(has);
      expect(params).not.toContain(lacks);
      await Promise.all(part.providers.map((p) => p.adapter.close?.() ?? Promise.resolve()));
    }
  });

  it("reads, validates and builds adapters in one call", async () => {
    const path = join(dir, "load.json");
    writeFileSync(path, JSON.stringify(EXAMPLE));
    const part = loadProvidersFile(path, { LOCAL_KEY: "k" });
    expect(part.providers[0]!.slug).toBe("local");
    expect(typeof part.providers[0]!.adapter.stream).toBe("function");
    await part.providers[0]!.adapter.close?.();
    expect(() => loadProvidersFile(path, {})).toThrow(ProvidersFileError);
  });
});
