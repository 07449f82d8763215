import type { BatchPreparer } from "./domain/ingest/pipeline/preparer-port.js";
import type { ActivityStore } from "./stores/activity-store.js";
import { warmUpTokenCounter } from "./gateway/tokens/count-tokens.js";

/** One record that parses and validates but names a key no organization has. */
const PROBE = JSON.stringify({
  generations: [
    {
      id: "warm-up",
      created_at: "2026-01-01T00:00:00Z",
      api_key_hash: "0".repeat(64),
      model: "warm/up",
      provider: "Warm",
      tokens_prompt: 1,
      tokens_completion: 1,
      usage: 0,
      latency_ms: 1,
    },
  ],
});

/**
 * Done before the server listens (so before /readyz can say ready): starts every ingest worker
 * and runs one batch through each (module loading and compilation happen now, not on the first
 * real batch), reads the activity store once (its tables and first query), and loads the gateway's
 * token encoder (tens of ms on its first use). The probe batch is
 * refused (its key is unknown), so nothing is written.
 */
export async function warmUp(opts: {
  preparer: BatchPreparer | undefined;
  workers: number;
  activity: ActivityStore;
}): Promise<void> {
  warmUpTokenCounter();
  const jobs: Promise<unknown>[] = [];
  if (opts.preparer) {
    for (let i = 0; i < opts.workers; i++) {
      jobs.push(
        opts.preparer
          .prepare({ format: "json", text: Buffer.from(PROBE) }, "warm-up", Date.now(), async () => ({
            keys: new Map(),
            workspaces: new Set(),
            legacyWorkspace: null,
          }))
          .catch(() => undefined),
      );
    }
  }
  jobs.push(
    opts.activity
      .query({ sql: "SELECT count(*) AS n FROM generations", params: {} }, { timeoutMs: 30_000 })
      .catch(() => undefined),
  );
  await Promise.all(jobs);
}
