import { nanoToUsd } from "../../lib/money.js";
import type { ProviderChunk, ProviderUsage } from "../providers/provider.js";
import type { TokenCost } from "../reservations/token-cost.js";

/** Chat answers on the wire, as strict as the SDK (docs/wire-compatibility.md "Chat answers"). */

/** What an answer was charged (ChatRun.chargeOf). */
export interface Charge {
  usage: ProviderUsage;
  /** The usage at its endpoint's prices, and how that splits (token-cost.ts). */
  cost: TokenCost;
  /** Charged to the key's usage: `cost.totalNano`, or 0 for BYOK. */
  costNano: bigint;
  /** Billed to the organization's own provider key: `cost.totalNano` for BYOK, else 0. */
  byokCostNano: bigint;
  isByok: boolean;
}

/**
 * ChatUsage: every count an integer, no null where the SDK rejects one, `cost` in USD. The
 * `cost_details` split is the charge's own: the prompt's part (cache reads and writes at their
 * prices) and the completion's add up to the cost exactly (to `upstream_inference_cost` for BYOK).
 */
export function usageWire(c: Charge): Record<string, unknown> {
  const { usage: u, cost } = c;
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens, cache_write_tokens: u.cacheWriteTokens },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
    cost: nanoToUsd(c.costNano),
    is_byok: c.isByok,
    cost_details: {
      upstream_inference_cost: c.isByok ? nanoToUsd(c.byokCostNano) : null,
      upstream_inference_prompt_cost: nanoToUsd(cost.promptNano),
      upstream_inference_completions_cost: nanoToUsd(cost.completionNano),
    },
  };
}

export interface ChunkHead {
  id: string;
  created: number;
  model: string;
  provider: string;
}

const head = (h: ChunkHead) => ({
  id: h.id,
  provider: h.provider,
  model: h.model,
  object: "chat.completion.chunk",
  created: h.created,
});

/** A delta without null-valued keys (a stream chunk rejects `role: null`, `tool_calls: null`). */
function cleanDelta(delta: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(delta)) {
    if (v === null || v === undefined) continue;
    if (k === "role" && v !== "assistant") continue;
    out[k] = v;
  }
  return out;
}

const choicesOf = (c: ProviderChunk) =>
  c.choices.map((ch) => ({
    index: ch.index,
    delta: cleanDelta(ch.delta),
    finish_reason: ch.finish_reason,
    ...(ch.logprobs ? { logprobs: ch.logprobs } : {}),
  }));

/**
 * A stream's events (`data: {chunk}` and a blank line): a content chunk, or the usage chunk
 * (`choices: []`) that ends a stream. The fields every chunk repeats (id, provider, model,
 * object, created) are serialized once per stream instead of once per chunk: the same bytes as
 * `sse({ ...head, choices })`, at about 40 % of the CPU per chunk (bench/experiments/stream-chunks.ts).
 */
export class ChunkEncoder {
  /** `data: {"id":…,…,"created":…,` */
  private readonly prefix: string;

  constructor(h: ChunkHead) {
    const headJson = JSON.stringify(head(h));
    this.prefix = `data: ${headJson.slice(0, -1)},`;
  }

  content(c: ProviderChunk): string {
    return `${this.prefix}"choices":${JSON.stringify(choicesOf(c))}}\n\n`;
  }

  usage(usage: Record<string, unknown>): string {
    return `${this.prefix}"choices":[],"usage":${JSON.stringify(usage)}}\n\n`;
  }
}

/** The in-band error after the first byte: a complete chunk with finish_reason "error". */
export function errorChunk(
  h: ChunkHead,
  code: number,
  message: string,
  errorType: string,
  usage: Record<string, unknown>,
): Record<string, unknown> {
  return {
    ...head(h),
    choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
    error: { code, message, metadata: { error_type: errorType } },
    usage,
  };
}

export const sse = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;
export const SSE_DONE = "data: [DONE]\n\n";
