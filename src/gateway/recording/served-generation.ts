import { hash } from "node:crypto";
import type { KeyPolicy } from "../../domain/policy/policy.js";

/** What a served generation knows of its key: enough to store its row without a lookup. */
export type ServedKey = Pick<KeyPolicy, "id" | "hash" | "organizationId" | "workspaceId" | "creatorUserId">;

/** Everything known of a finished request (success, error after output, cancelled). */
export interface ServedGeneration {
  id: string;
  /** The key that made it (what the record and its details name). */
  key: ServedKey;
  model: string;
  /** The API surface it came through (src/gateway/surfaces/api.ts): chat, responses, messages, embeddings. */
  api: string;
  /** Provider slug and display name. */
  provider: string;
  providerName: string;
  createdAt: Date;
  appTitle: string | null;
  referer: string | null;
  externalUser: string | null;
  sessionId: string | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** Charged to the key's usage (0 for BYOK). */
  costNano: bigint;
  /** Billed to the organization's own provider key (BYOK only). */
  byokCostNano: bigint;
  /**
   * The part of the cost (costNano or byokCostNano) priced at the endpoint's cache prices: cache
   * reads and writes (the record's `usage_cache`); 0 without cache prices.
   */
  cacheCostNano: bigint;
  isByok: boolean;
  /** Time to first token. */
  latencyMs: number;
  generationTimeMs: number;
  finishReason: string | null;
  streamed: boolean;
  cancelled: boolean;
  upstreamId: string | null;
  /** Every attempt, in order; `byok`: made with the organization's own key. */
  attempts: { provider: string; model: string; status: number | null; durationMs: number; byok: boolean }[];
  /**
   * For Broadcast only (LiveContext): never written to analytics. Text only, within
   * BROADCAST_MAX_CONTEXT_BYTES (src/broadcast/stored-content.ts builds them when a request settles).
   */
  input: readonly unknown[];
  output: string | null;
  params: Record<string, number | string | boolean> | null;
  /**
   * What guardrails did (docs/guardrails.md): `invoked` when a rule acted on the request (a
   * redaction or a flag); `flags`: the labels of `flag` matches, recorded as classifier tags
   * (src/domain/guardrails/guardrail-flags.ts). Absent: nothing.
   */
  guardrail?: { invoked: boolean; flags: readonly string[] };
}

/**
 * A served generation as the recording journal keeps it (journal.ts): its key without the id and
 * creator, which ingest looks up when the journal is replayed.
 */
export type JournaledGeneration = Omit<ServedGeneration, "key"> & {
  key: Pick<ServedKey, "hash" | "organizationId" | "workspaceId">;
};

/** A stable positive app id for a referer (analytics `app_id`): 48 bits of its SHA-256. */
export function appIdOf(referer: string | null, title: string | null): number | null {
  const basis = referer ?? title;
  if (basis === null) return null;
  const n = hash("sha256", basis, "buffer").readUIntBE(0, 6);
  return n === 0 ? 1 : n;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;

/**
 * A text the client (a header, the body's `user`) or the upstream (`finish_reason`) chose, as the
 * record holds it: at most `max` characters, each control character (a tab in a header, a newline
 * in `user`) a space. The ingest path refuses control characters, and a refused record was a
 * generation answered but never recorded nor charged (its hold left open).
 */
export const cut = (s: string | null, max = 1024): string | null =>
  s === null ? null : firstUnits(s, max).replace(CONTROL, " ");

/**
 * At most `max` UTF-16 units of `s`, never half a character: a cut between a surrogate pair's
 * halves would leave a lone surrogate, which JSON carries as `\ud83d` and ClickHouse's
 * JSONEachRow refuses (with the whole Broadcast batch it is in).
 */
function firstUnits(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
