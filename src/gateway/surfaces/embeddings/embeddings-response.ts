import { float32ToBase64 } from "../../../lib/float32-base64.js";
import { nanoToUsd } from "../../../lib/money.js";
import { costNano } from "../../reservations/enforcement.js";
import type { EmbeddingEncoding } from "./embeddings-request.js";

/**
 * POST /embeddings' answer (docs/surfaces/embeddings.md "Response"): OpenAI's list of embeddings
 * with the router's usage. A vector is numbers when `float` was asked for, else base64 of its
 * little-endian float32 bytes: the `openai` package asks for base64 by default and, handed
 * numbers, silently yields an empty vector. `usage.cost` is always a number (the SDK refuses
 * null there).
 */

/** What the request was charged (settled by the pipeline), in nano-USD. */
export interface EmbeddingCharge {
  promptTokens: number;
  costNano: bigint;
  /** What the provider billed the organization's own key (BYOK), when it was one. */
  byokCostNano: bigint;
  isByok: boolean;
}

export interface EmbeddingsUsageWire {
  prompt_tokens: number;
  total_tokens: number;
  /** USD; never null. */
  cost: number;
  is_byok: boolean;
  cost_details: {
    upstream_inference_cost: number | null;
    upstream_inference_prompt_cost: number;
    upstream_inference_completions_cost: number;
  };
}

export interface EmbeddingsResponseWire {
  object: "list";
  data: { object: "embedding"; embedding: number[] | string; index: number }[];
  model: string;
  id: string;
  usage: EmbeddingsUsageWire;
}

/**
 * The usage object: chat's (chat/wire.ts usageWire) without completion tokens. The prompt cost is
 * the prompt's tokens at the endpoint's prompt price; an embedding has no completion cost.
 */
export function embeddingsUsage(c: EmbeddingCharge, promptPricePerMTokNano: bigint): EmbeddingsUsageWire {
  const prices = { promptPerMTokNano: promptPricePerMTokNano, completionPerMTokNano: 0n };
  return {
    prompt_tokens: c.promptTokens,
    total_tokens: c.promptTokens,
    cost: nanoToUsd(c.costNano),
    is_byok: c.isByok,
    cost_details: {
      upstream_inference_cost: c.isByok ? nanoToUsd(c.byokCostNano) : null,
      upstream_inference_prompt_cost: nanoToUsd(costNano(prices, c.promptTokens, 0)),
      upstream_inference_completions_cost: 0,
    },
  };
}

export function embeddingsResponse(
  vectors: readonly Float32Array[],
  opts: { model: string; id: string; encoding: EmbeddingEncoding; usage: EmbeddingsUsageWire },
): EmbeddingsResponseWire {
  const encode = opts.encoding === "base64" ? float32ToBase64 : (v: Float32Array) => Array.from(v);
  return {
    object: "list",
    data: vectors.map((v, index) => ({ object: "embedding", embedding: encode(v), index })),
    model: opts.model,
    id: opts.id,
    usage: opts.usage,
  };
}
