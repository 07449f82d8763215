import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadProvidersFile, type FileCatalogPart } from "../../../src/gateway/catalog/load-providers-file.js";
import { UpstreamTimeout } from "../../../src/gateway/providers/provider.js";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../../helpers/fake-upstreams/anthropic.js";
import type { FakeServer } from "../../helpers/fake-upstreams/fake-server.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../../helpers/fake-upstreams/openai.js";

let openai: FakeServer;
let anthropic: FakeServer;
let dir: string;
let part: FileCatalogPart;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  dir = mkdtempSync(join(tmpdir(), "gatehouse-file-providers-"));
  const path = join(dir, "providers.json");
  writeFileSync(
    path,
    JSON.stringify({
      providers: [
        {
          slug: "local",
          kind: "openai-compatible",
          base_url: `${openai.url}/v1`,
          api_key_env: "LOCAL_KEY",
          headers: { "X-Tenant": "t1" },
        },
        {
          slug: "impatient",
          kind: "openai-compatible",
          base_url: `${openai.url}/v1`,
          api_key_env: "LOCAL_KEY",
          timeout_ms: 150,
        },
        { slug: "claude", kind: "anthropic", base_url: anthropic.url, api_key: FAKE_ANTHROPIC_KEY },
      ],
      models: [
        {
          id: "local/ok",
          provider: "local",
          upstream_model: "ok",
          prompt_price: 0.000001,
          completion_price: 0.000002,
          context_length: 8192,
          max_completion_tokens: 1024,
        },
        {
          id: "anthropic/ok",
          provider: "claude",
          upstream_model: "ok",
          prompt_price: "0.000003",
          completion_price: "0.000015",
          context_length: 200000,
          max_completion_tokens: 64000,
        },
      ],
    }),
  );
  part = loadProvidersFile(path, { LOCAL_KEY: FAKE_OPENAI_KEY });
});

afterAll(async () => {
  await Promise.all(part.providers.map((p) => p.adapter.close?.() ?? Promise.resolve()));
  await Promise.all([openai.close(), anthropic.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const adapter = (slug: string) => part.providers.find((p) => p.slug === slug)!.adapter;
const body = { messages: [{ role: "user", content: "Hi" }] };

describe("adapters built from the providers file", () => {
  it("reach each upstream with the file's base URL, key (from api_key_env or inline) and headers", async () => {
    const a = await adapter("local").complete(
      { upstreamModel: "ok", body, timeoutMs: 5_000 },
      new AbortController().signal,
    );
    expect(a.usage?.promptTokens).toBe(12);
    expect(openai.requests.at(-1)!.headers["x-tenant"]).toBe("t1");
    const model = part.models.find((m) => m.id === "anthropic/ok")!;
    const b = await adapter("claude").complete(
      {
        upstreamModel: "ok",
        body,
        timeoutMs: 5_000,
        maxCompletionTokens: model.endpoints[0]!.maxCompletionTokens,
      },
      new AbortController().signal,
    );
    expect(b.usage?.promptTokens).toBe(15);
    expect(anthropic.requests.at(-1)!.body.max_tokens).toBe(64000);
  });

  it("the provider's timeout_ms becomes its entry's first-byte deadline; the adapter raises UpstreamTimeout past it", async () => {
    const impatient = part.providers.find((p) => p.slug === "impatient")!;
    expect(impatient.timeoutMs).toBe(150);
    expect(part.providers.find((p) => p.slug === "local")!.timeoutMs).toBeNull();
    // The gateway passes the entry's deadline as the call's timeoutMs (chat/serve.ts timeoutOf).
    const err = await impatient.adapter
      .complete(
        { upstreamModel: "slow-headers", body, timeoutMs: impatient.timeoutMs! },
        new AbortController().signal,
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamTimeout);
    expect(err).toMatchObject({ phase: "first-byte", timeoutMs: 150, retryable: true, status: null });
    expect((err as Error).message).toContain("150 ms");
  });
});
