import { Type, type Static } from "typebox";
import type { SecretBox } from "../../lib/secret-box.js";
import { Nullable, StringEnum } from "../../lib/typebox.js";
import { DESTINATION_TYPE_NAMES, type DestinationType } from "./destination-types.js";
import type { DestinationRow } from "./destination-repo.js";
import { FilterRulesSchema, type FilterRulesConfig } from "./filter-rules.js";
import { maskConfig } from "./mask.js";
import type { DataRegion } from "./regions.js";
import type { DestinationConfig } from "./validate-config.js";

/** The destination type's name, as a string enum (requests and records). */
export const DestinationTypeSchema = StringEnum(DESTINATION_TYPE_NAMES);

/** A JSON object with any keys; per-type rules are checked by the domain (validate-config.ts). */
export const ConfigObjectSchema = Type.Unsafe<Record<string, unknown>>({
  type: "object",
  additionalProperties: true,
});

/** The wire record: every SDK variant's 16 fields (docs/wire-compatibility.md "Destinations record"). */
export const DestinationRecordSchema = Type.Object({
  id: Type.String({ format: "uuid" }),
  type: DestinationTypeSchema,
  name: Nullable(Type.String()),
  workspace_id: Type.String({ format: "uuid" }),
  enabled: Type.Boolean(),
  privacy_mode: Type.Boolean(),
  broadcast_generation_cost: Type.Boolean(),
  broadcast_generation_identity: Type.Boolean(),
  broadcast_generation_request_context: Type.Boolean(),
  sampling_rate: Type.Number(),
  api_key_hashes: Nullable(Type.Array(Type.String())),
  filter_rules: Nullable(FilterRulesSchema),
  regions: Type.Array(StringEnum<DataRegion>(["global", "europe", "us"])),
  created_at: Type.String(),
  updated_at: Type.String(),
  /** Masked: secrets, URL credentials and header values never leave in plain text. */
  config: ConfigObjectSchema,
});
export type Destination = Static<typeof DestinationRecordSchema>;

/** Seals a config for the destinations.config_ciphertext column; the row id is the AAD. */
export const sealConfig = (box: SecretBox, id: string, config: DestinationConfig): string =>
  box.seal(JSON.stringify(config), id);

/** The stored config in plain text (never returned over HTTP; see toDestination). */
export const openConfig = (box: SecretBox, row: Pick<DestinationRow, "id" | "config_ciphertext">) =>
  JSON.parse(box.open(row.config_ciphertext, row.id)) as DestinationConfig;

const bool = (v: number | bigint | string): boolean => Number(v) === 1;

export function toDestination(box: SecretBox, row: DestinationRow): Destination {
  const type = row.type as DestinationType;
  return {
    id: row.id,
    type,
    name: row.name,
    workspace_id: row.workspace_id,
    enabled: bool(row.enabled),
    privacy_mode: bool(row.privacy_mode),
    broadcast_generation_cost: bool(row.broadcast_generation_cost),
    broadcast_generation_identity: bool(row.broadcast_generation_identity),
    broadcast_generation_request_context: bool(row.broadcast_generation_request_context),
    sampling_rate: Number(row.sampling_rate),
    api_key_hashes: row.api_key_hashes === null ? null : (JSON.parse(row.api_key_hashes) as string[]),
    filter_rules: row.filter_rules === null ? null : (JSON.parse(row.filter_rules) as FilterRulesConfig),
    regions: JSON.parse(row.regions) as DataRegion[],
    created_at: row.created_at,
    updated_at: row.updated_at,
    config: maskConfig(type, openConfig(box, row)),
  };
}
