import type { BroadcastMessage } from "./encoders/encoder.js";

/**
 * What the gateway knows about a generation it served beyond the generation record: the content
 * and request details Broadcast may send. It travels from the gateway to the Broadcast outbox
 * with the record and is kept only until every delivery that needs it is done or dead-lettered;
 * it never reaches the analytics store.
 */
export interface LiveContext {
  input: BroadcastMessage[] | null;
  output: string | null;
  params: Record<string, number | string | boolean> | null;
  trace: Record<string, string> | null;
  attempts: { provider: string; model: string; status: number | null; durationMs: number }[];
  appTitle: string | null;
  referer: string | null;
  sessionId: string | null;
  /** USD split of the cost, when the gateway priced the parts. */
  promptCostUsd: number | null;
  completionCostUsd: number | null;
}
