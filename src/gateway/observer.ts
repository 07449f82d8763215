import type { ServedGeneration } from "./recording/record-generation.js";

/**
 * What the data plane reports as it serves, for the process's metrics (src/metrics/). Called on
 * the request path: each call must be cheap and must not throw.
 */
export interface GatewayObserver {
  /** One upstream attempt ended: its HTTP status, or null when there was no answer (timeout, connection). */
  attempt(provider: string, model: string, status: number | null): void;
  /** A generation was served (completed, failed after output, or cancelled) and handed to recording. */
  generation(g: ServedGeneration, overheadMs: number): void;
  /**
   * A request was refused before anything was forwarded, for `reason`: `key_limit` (the key's
   * limit cannot cover it: 402 or 403), `workspace_budget` (403), `guardrail_budget` (403: a
   * guardrail's limit_usd) or `guardrail` (403: a content filter's block, or no endpoint its
   * guardrails allow). The in-flight limits count their own refusals (in-flight-limits.ts).
   */
  refused?(reason: "key_limit" | "workspace_budget" | "guardrail_budget" | "guardrail"): void;
}
