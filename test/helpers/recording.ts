import { newGenerationId } from "../../src/gateway/chat/serve.js";
import type { JournaledGeneration, ServedGeneration } from "../../src/gateway/recording/record-generation.js";
import type { RecordStore } from "../../src/stores/record-store.js";

/** A finished generation as the chat path hands it to the recorder (mock/echo, 20,000 nano-USD). */
export const servedGeneration = <K extends JournaledGeneration["key"]>(
  key: K,
  over: Partial<Omit<ServedGeneration, "key">> = {},
): Omit<ServedGeneration, "key"> & { key: K } => ({
  id: newGenerationId(),
  key,
  model: "mock/echo",
  api: "chat",
  provider: "mock",
  providerName: "Mock",
  createdAt: new Date(),
  appTitle: null,
  referer: null,
  externalUser: null,
  sessionId: null,
  promptTokens: 10,
  completionTokens: 5,
  cachedTokens: 0,
  reasoningTokens: 0,
  costNano: 20_000n,
  byokCostNano: 0n,
  cacheCostNano: 0n,
  isByok: false,
  latencyMs: 1,
  generationTimeMs: 1,
  finishReason: "stop",
  streamed: false,
  cancelled: false,
  upstreamId: null,
  attempts: [],
  input: [],
  output: "ok",
  params: null,
  ...over,
});

/** Holds every record-store transaction of `store` until `open()` (a commit that cannot happen yet). */
export function gateTransactions(store: RecordStore): { open(): void } {
  const transaction = store.transaction.bind(store);
  let open: () => void = () => undefined;
  const opened = new Promise<void>((done) => (open = done));
  store.transaction = async (fn) => {
    await opened;
    return transaction(fn);
  };
  return {
    open: () => {
      open();
      store.transaction = transaction;
    },
  };
}

/**
 * Makes every record-store transaction of `store` fail with `err` (the store busy or down) until
 * `restore()`.
 */
export function failTransactions(store: RecordStore, err: Error): { restore(): void } {
  const transaction = store.transaction.bind(store);
  store.transaction = () => Promise.reject(err);
  return { restore: () => void (store.transaction = transaction) };
}
