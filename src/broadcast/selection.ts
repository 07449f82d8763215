import type { DestinationRow } from "../domain/destinations/destination-repo.js";
import type { FilterRulesConfig } from "../domain/destinations/filter-rules.js";
import type { GenerationFlags, Candidate } from "./broadcast-generation.js";
import { filterMatches, type FilterSubject } from "./filter-match.js";
import { sampledIn } from "./sampling.js";

/** A destination's selection settings, parsed once from its row. */
export interface DestinationRule {
  id: string;
  organizationId: string;
  workspaceId: string;
  type: string;
  enabled: boolean;
  samplingRate: number;
  apiKeyHashes: ReadonlySet<string> | null;
  filterRules: FilterRulesConfig | null;
  flags: GenerationFlags;
}

const bool = (v: number | bigint | string): boolean => Number(v) === 1;

export function ruleOf(row: DestinationRow): DestinationRule {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    type: row.type,
    enabled: bool(row.enabled) && row.deleted_at === null,
    samplingRate: Number(row.sampling_rate),
    apiKeyHashes: row.api_key_hashes === null ? null : new Set(JSON.parse(row.api_key_hashes) as string[]),
    filterRules: row.filter_rules === null ? null : (JSON.parse(row.filter_rules) as FilterRulesConfig),
    flags: {
      privacyMode: bool(row.privacy_mode),
      cost: bool(row.broadcast_generation_cost),
      identity: bool(row.broadcast_generation_identity),
      requestContext: bool(row.broadcast_generation_request_context),
    },
  };
}

const textOfInput = (c: Candidate): string | null => {
  const input = c.context?.input;
  if (!input || input.length === 0) return null;
  return input.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
};

/** The values filter rules read, for one generation. */
export function subjectOf(c: Candidate): FilterSubject {
  const r = c.row;
  return {
    model: r.model,
    provider: r.provider,
    session_id: c.context?.sessionId ?? null,
    user_id: r.user_id,
    api_key_name: c.apiKeyName,
    finish_reason: r.finish_reason,
    input: textOfInput(c),
    output: c.context?.output ?? null,
    total_cost: Number(r.usage_nano) / 1e9,
    total_tokens: r.tokens_prompt + r.tokens_completion,
    prompt_tokens: r.tokens_prompt,
    completion_tokens: r.tokens_completion,
  };
}

/**
 * Whether a destination takes a generation of its workspace (docs/broadcast.md "Selection"):
 * enabled; its key allowlist empty (null) or holding the generation's key; its filter rules
 * matching; and sampled in, deterministically per (destination, session or generation id).
 */
export function selects(d: DestinationRule, c: Candidate, workspaceId: string): boolean {
  if (!d.enabled || d.workspaceId !== workspaceId) return false;
  if (d.apiKeyHashes !== null && !d.apiKeyHashes.has(c.row.api_key_hash)) return false;
  if (!sampledIn(d.id, d.samplingRate, c.context?.sessionId ?? null, c.row.id)) return false;
  return filterMatches(d.filterRules, subjectOf(c));
}
