import { Type, type Static } from "typebox";
import { DESTINATION_TYPE_NAMES } from "../../domain/destinations/destination-types.js";
import { FILTER_FIELDS, FILTER_OPERATORS } from "../../domain/destinations/filter-rules.js";
import { Nullable, PageQuery, Uuid } from "./common.js";

/** A string from a closed set (typed `{type: "string", enum}` so responses serialise exactly). */
const StringEnum = <T extends string>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: "string", enum: [...values] });

export const DestinationTypeSchema = StringEnum(DESTINATION_TYPE_NAMES);
const RegionInput = StringEnum(["global", "europe", "us", "eu"] as const);
const Region = StringEnum(["global", "europe", "us"] as const);

const FilterRule = Type.Object({
  field: StringEnum(FILTER_FIELDS),
  operator: StringEnum(FILTER_OPERATORS),
  value: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Number()])),
});

const FilterRulesInput = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  groups: Type.Array(
    Type.Object({
      logic: Type.Optional(StringEnum(["and", "or"] as const)),
      rules: Type.Array(FilterRule, { maxItems: 50 }),
    }),
    { maxItems: 20 },
  ),
});

const FilterRulesOutput = Type.Object({
  enabled: Type.Boolean(),
  groups: Type.Array(
    Type.Object({ logic: StringEnum(["and", "or"] as const), rules: Type.Array(FilterRule) }),
  ),
});

/** A JSON object with any keys; per-type rules are checked by the domain (validate-config.ts). */
const ConfigObject = Type.Unsafe<Record<string, unknown>>({ type: "object", additionalProperties: true });

const ApiKeyHashes = Type.Array(Type.String({ pattern: "^[0-9a-fA-F]{64}$" }), {
  minItems: 1,
  maxItems: 1000,
});

/** Fields that create and update share; on update every one is optional and has no default. */
const settings = {
  enabled: Type.Optional(Type.Boolean()),
  privacy_mode: Type.Optional(Type.Boolean()),
  broadcast_generation_cost: Type.Optional(Type.Boolean()),
  broadcast_generation_identity: Type.Optional(Type.Boolean()),
  broadcast_generation_request_context: Type.Optional(Type.Boolean()),
  sampling_rate: Type.Optional(Type.Number({ minimum: 0.0001, maximum: 1 })),
  api_key_hashes: Type.Optional(Nullable(ApiKeyHashes)),
  filter_rules: Type.Optional(Nullable(FilterRulesInput)),
  regions: Type.Optional(Type.Array(RegionInput, { minItems: 1, maxItems: 10 })),
};

const Name = Type.String({ minLength: 1, maxLength: 200 });

export const CreateDestinationBody = Type.Object({
  name: Name,
  type: DestinationTypeSchema,
  config: ConfigObject,
  workspace_id: Type.Optional(Uuid),
  ...settings,
});

export const UpdateDestinationBody = Type.Object({
  name: Type.Optional(Name),
  config: Type.Optional(ConfigObject),
  ...settings,
});

export const DestinationParams = Type.Object({ id: Type.String() });

export const ListDestinationsQuery = Type.Object({ ...PageQuery, workspace_id: Type.Optional(Uuid) });

/** The record: the 16 fields every SDK variant requires (compatibility-facts.md §D). */
export const DestinationSchema = Type.Object({
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
  filter_rules: Nullable(FilterRulesOutput),
  regions: Type.Array(Region),
  created_at: Type.String(),
  updated_at: Type.String(),
  config: ConfigObject,
});

export const DestinationResponse = Type.Object({ data: DestinationSchema });
export const DestinationListResponse = Type.Object({
  data: Type.Array(DestinationSchema),
  total_count: Type.Integer(),
});

export type CreateDestinationBodyT = Static<typeof CreateDestinationBody>;
export type UpdateDestinationBodyT = Static<typeof UpdateDestinationBody>;
export type ListDestinationsQueryT = Static<typeof ListDestinationsQuery>;
export type DestinationParamsT = Static<typeof DestinationParams>;
