import { HTTPClient, OpenRouter } from "@openrouter/sdk";
import { makeTestApp, type TestApp, type TestAppOptions } from "./app.js";
// The SDK refuses request keys it would otherwise drop (max_tokens for maxTokens): see the file.
import "./sdk-strict.js";

export interface ListeningApp extends TestApp {
  /** `http://127.0.0.1:<port>/api/v1` */
  baseUrl: string;
  /** The official SDK pointed at this server, retries off (a 5xx must not hang a test). */
  sdk(key?: string): OpenRouter;
  /** The raw JSON body of the last response the SDK received through sdkWithRaw(). */
  lastRaw(): unknown;
  sdkWithRaw(key?: string): OpenRouter;
}

/** A real app on a real socket, for tests that go through the official SDK or fetch. */
export async function startListening(opts: TestAppOptions = {}): Promise<ListeningApp> {
  const t = await makeTestApp(opts);
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = t.app.server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}/api/v1`;
  let raw: unknown;
  const make = (key: string, httpClient?: HTTPClient) =>
    new OpenRouter({
      apiKey: key,
      serverURL: baseUrl,
      retryConfig: { strategy: "none" },
      timeoutMs: 10_000,
      ...(httpClient ? { httpClient } : {}),
    });
  return {
    ...t,
    baseUrl,
    sdk: (key = t.key) => make(key),
    sdkWithRaw: (key = t.key) => {
      const httpClient = new HTTPClient();
      httpClient.addHook("response", async (res) => {
        raw = await res
          .clone()
          .json()
          .catch(() => undefined);
      });
      return make(key, httpClient);
    },
    lastRaw: () => raw,
  };
}
