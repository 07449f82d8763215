import { Type } from "typebox";
import { ByokKeyRecordSchema } from "../../domain/byok/byok-record.js";
import { MAX_OFFSET, Nullable } from "./common.js";

/** BYOK keys (docs/wire-compatibility.md "BYOK keys"). The raw `key` is accepted, never returned. */
const Strings = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 1000 });

const common = {
  name: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
  allowed_models: Type.Optional(Nullable(Strings)),
  allowed_user_ids: Type.Optional(Nullable(Strings)),
  allowed_api_key_hashes: Type.Optional(Nullable(Strings)),
  declared_zdr: Type.Optional(Nullable(Type.Boolean())),
  disabled: Type.Optional(Type.Boolean()),
  is_fallback: Type.Optional(Type.Boolean()),
  is_required: Type.Optional(Type.Boolean()),
  is_byok_only: Type.Optional(Type.Boolean()),
  sort_order: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 1_000_000,
      description: "Gatehouse extension: lower is tried first",
    }),
  ),
};

const Secret = Type.String({
  minLength: 1,
  maxLength: 8192,
  description: "The provider credential; never returned",
});

export const CreateByokBody = Type.Object({
  provider: Type.String({ minLength: 1, maxLength: 128 }),
  key: Secret,
  workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  ...common,
});

export const UpdateByokBody = Type.Object({ key: Type.Optional(Secret), ...common });

/** Any text: an id that is not a UUID (empty included) names no key, 404 (byok.get and delete map no 400). */
export const ByokParams = Type.Object({ id: Type.String() });

export const ByokListQuery = Type.Object({
  offset: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: MAX_OFFSET }), Type.Null()])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  provider: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
});

export const ByokResponse = Type.Object({ data: ByokKeyRecordSchema });
export const ByokListResponse = Type.Object({
  data: Type.Array(ByokKeyRecordSchema),
  total_count: Type.Integer(),
});
