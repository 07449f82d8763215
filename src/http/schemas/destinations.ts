import { Type, type Static } from "typebox";
import {
  ConfigObjectSchema,
  DestinationRecordSchema,
  DestinationTypeSchema,
} from "../../domain/destinations/destination-record.js";
import { FilterLogicSchema, FilterRuleSchema } from "../../domain/destinations/filter-rules.js";
import { StringEnum } from "../../lib/typebox.js";
import { Nullable, PageQuery, Uuid } from "./common.js";

const RegionInput = StringEnum(["global", "europe", "us", "eu"] as const);

const FilterRulesInput = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  groups: Type.Array(
    Type.Object({
      logic: Type.Optional(FilterLogicSchema),
      rules: Type.Array(FilterRuleSchema, { maxItems: 50 }),
    }),
    { maxItems: 20 },
  ),
});

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
  config: ConfigObjectSchema,
  workspace_id: Type.Optional(Uuid),
  ...settings,
});

export const UpdateDestinationBody = Type.Object({
  name: Type.Optional(Name),
  config: Type.Optional(ConfigObjectSchema),
  ...settings,
});

export const DestinationParams = Type.Object({ id: Type.String() });

export const ListDestinationsQuery = Type.Object({ ...PageQuery, workspace_id: Type.Optional(Uuid) });

export const DestinationResponse = Type.Object({ data: DestinationRecordSchema });
export const DestinationListResponse = Type.Object({
  data: Type.Array(DestinationRecordSchema),
  total_count: Type.Integer(),
});

export type CreateDestinationBodyT = Static<typeof CreateDestinationBody>;
export type UpdateDestinationBodyT = Static<typeof UpdateDestinationBody>;
export type ListDestinationsQueryT = Static<typeof ListDestinationsQuery>;
export type DestinationParamsT = Static<typeof DestinationParams>;
