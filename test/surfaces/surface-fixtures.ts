import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../helpers/fake-upstreams/anthropic.js";
import type { FakeServer } from "../helpers/fake-upstreams/fake-server.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../helpers/fake-upstreams/openai.js";
import { writeProvidersFile, type FileModel, type WrittenProvidersFile } from "../helpers/providers-file.js";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { systemClock } from "../../src/lib/clock.js";

/**
 * A listening Gatehouse in front of both kinds of fake upstream (an OpenAI-compatible one and an
 * Anthropic one, each following its provider's documented wire format), with the same models on
 * each: `local/<name>` reaches the OpenAI fake, `anthropic/<name>` the Anthropic fake, where
 * <name> is the fake's behaviour (ok, tools, thinking, …); `native/<name>` reaches the OpenAI fake
 * through a provider that declares `responses: true` (Responses requests go to its /v1/responses
 * as sent). Prices are exact in nano-USD.
 */
export interface SurfaceRig {
  s: ListeningApp;
  /** The fakes: what each received (`requests`). */
  openai: FakeServer;
  anthropic: FakeServer;
  close(): Promise<void>;
  key(name: string, body?: Record<string, unknown>): Promise<string>;
  /** Usage of a key (GET /key), USD. */
  usage(key: string): Promise<number>;
  /** The stored row's `api` of a generation (waits for the recorder). */
  apiOf(id: string): Promise<string | null>;
}

/** GET /metrics of the rig's server takes this bearer token. */
export const RIG_METRICS_TOKEN = "surface-rig-metrics-token";

export const PROMPT_NANO = 3_100;
export const COMPLETION_NANO = 12_700;
const EMBED_MODEL: FileModel = {
  id: "local/embed",
  provider: "local",
  upstream_model: "embed",
  kind: "embedding",
  prompt_price: "0.0000031",
};
const NAMES = ["ok", "tools", "thinking", "reasoning", "never-ends", "no-usage"];
const NATIVE_NAMES = ["ok", "tools", "reasoning", "fail-late", "error-500"];

export async function startSurfaceRig(opts: { embeddingModels?: boolean } = {}): Promise<SurfaceRig> {
  const [openai, anthropic]: [FakeServer, FakeServer] = await Promise.all([
    startFakeOpenAI(),
    startFakeAnthropic(),
  ]);
  const priced = { prompt_price: "0.0000031", completion_price: "0.0000127" };
  const file: WrittenProvidersFile = writeProvidersFile(
    [
      { slug: "local", kind: "openai-compatible", base_url: `${openai.url}/v1`, api_key_env: "LOCAL_KEY" },
      { slug: "claude", kind: "anthropic", base_url: anthropic.url, api_key_env: "CLAUDE_KEY" },
      {
        slug: "native",
        kind: "openai-compatible",
        base_url: `${openai.url}/v1`,
        api_key_env: "LOCAL_KEY",
        responses: true,
      },
    ],
    [
      ...(opts.embeddingModels ? [EMBED_MODEL] : []),
      ...NAMES.flatMap((n) => [
        { id: `local/${n}`, provider: "local", upstream_model: n, ...priced },
        {
          id: `anthropic/${n}`,
          provider: "claude",
          upstream_model: n,
          ...priced,
          context_length: 200_000,
          max_completion_tokens: 64_000,
        },
      ]),
      ...NATIVE_NAMES.map((n) => ({
        id: `native/${n}`,
        provider: "native",
        upstream_model: n,
        ...priced,
        max_completion_tokens: 1_000,
      })),
    ],
  );
  const s = await startListening({
    clock: systemClock,
    env: {
      GATEHOUSE_PROVIDERS_FILE: file.path,
      LOCAL_KEY: FAKE_OPENAI_KEY,
      CLAUDE_KEY: FAKE_ANTHROPIC_KEY,
      RATE_LIMIT_MANAGEMENT_MAX: "100000",
      RATE_LIMIT_INFERENCE_MAX: "100000",
      GATEHOUSE_METRICS_TOKEN: RIG_METRICS_TOKEN,
    },
  });
  return {
    s,
    openai,
    anthropic,
    async close() {
      await s.close();
      await Promise.all([openai.close(), anthropic.close()]);
      file.remove();
    },
    async key(name, body = {}) {
      const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name, ...body } });
      if (r.statusCode !== 201) throw new Error(`key: ${r.statusCode} ${r.body}`);
      return r.json<{ key: string }>().key;
    },
    async usage(key) {
      const r = await s.call({ method: "GET", url: "/api/v1/key", auth: key });
      return r.json<{ data: { usage: number } }>().data.usage;
    },
    async apiOf(id) {
      await s.app.gateway.recorder.settled();
      const [row] = await s.ctx.activity.query(
        { sql: "SELECT api FROM generations WHERE id = $id", params: { id } },
        { timeoutMs: 10_000 },
      );
      return (row?.api as string | null | undefined) ?? null;
    },
  };
}
