import { invalid } from "../errors.js";
import type { FilterRulesInput } from "./filter-rules.js";
import type { DataRegionInput } from "./regions.js";

/** Fields shared by create and update, as they arrive on the wire (already shape-checked). */
export interface DestinationSettingsInput {
  name?: string;
  config?: Record<string, unknown>;
  enabled?: boolean;
  privacy_mode?: boolean;
  broadcast_generation_cost?: boolean;
  broadcast_generation_identity?: boolean;
  broadcast_generation_request_context?: boolean;
  sampling_rate?: number;
  api_key_hashes?: string[] | null;
  filter_rules?: FilterRulesInput | null;
  regions?: DataRegionInput[];
}

export interface CreateDestinationInput extends DestinationSettingsInput {
  name: string;
  type: string;
  config: Record<string, unknown>;
  workspace_id?: string;
}

export type UpdateDestinationInput = DestinationSettingsInput;

/** Names are 1..200 characters (the wire schema) and not only whitespace. */
export function checkName(name: string): void {
  if (name.trim() === "") throw invalid("name: must not be blank");
}
