import { Type } from "typebox";
import { Nullable, UsdAmount, Uuid } from "./common.js";

/** Wire schemas of the API keys resource (compatibility-facts §A2, §C1, §F). */
export const LimitReset = Type.Enum(["daily", "weekly", "monthly"]);

const KeyName = Type.String({ minLength: 1, maxLength: 200 });

export const CreateKeyBody = Type.Object({
  name: KeyName,
  limit: Type.Optional(Nullable(UsdAmount)),
  limit_reset: Type.Optional(Nullable(LimitReset)),
  include_byok_in_limit: Type.Optional(Type.Boolean()),
  /** UTC with seconds (`2026-12-31T23:59:59Z`, fraction allowed), in the future: checked by the service. */
  expires_at: Type.Optional(Nullable(Type.String({ format: "date-time" }))),
  creator_user_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 256 }))),
  workspace_id: Type.Optional(Uuid),
  external: Type.Optional(
    Type.Object({
      user: Type.String({ minLength: 1, maxLength: 256 }),
      api_key: Type.Optional(Type.String({ minLength: 32, maxLength: 1024 })),
    }),
  ),
});

export const UpdateKeyBody = Type.Object({
  name: Type.Optional(KeyName),
  disabled: Type.Optional(Type.Boolean()),
  limit: Type.Optional(Nullable(UsdAmount)),
  limit_reset: Type.Optional(Nullable(LimitReset)),
  include_byok_in_limit: Type.Optional(Type.Boolean()),
  /** A Gatehouse extension (docs/api-notes.md): the same rules as on create; null removes the expiry. */
  expires_at: Type.Optional(
    Nullable(
      Type.String({
        format: "date-time",
        description:
          "Gatehouse extension: a new expiry (UTC with seconds, in the future), or null for none. Validated like POST /keys.",
      }),
    ),
  ),
});

export const ListKeysQuery = Type.Object({
  include_disabled: Type.Optional(Type.Boolean()),
  offset: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2_147_483_647 }))),
  workspace_id: Type.Optional(Uuid),
});

/** Any string: a hash that is not 64 hex digits is 404 (no such key), not 400. */
export const KeyHashParams = Type.Object({ hash: Type.String() });

const UsageFields = {
  limit: Nullable(Type.Number()),
  limit_remaining: Nullable(Type.Number()),
  limit_reset: Nullable(LimitReset),
  include_byok_in_limit: Type.Boolean(),
  usage: Type.Number(),
  usage_daily: Type.Number(),
  usage_weekly: Type.Number(),
  usage_monthly: Type.Number(),
  byok_usage: Type.Number(),
  byok_usage_daily: Type.Number(),
  byok_usage_weekly: Type.Number(),
  byok_usage_monthly: Type.Number(),
};

export const KeyRecord = Type.Object({
  hash: Type.String({ description: "SHA-256 of the key string, 64 lowercase hex digits" }),
  name: Type.String(),
  label: Type.String(),
  disabled: Type.Boolean(),
  ...UsageFields,
  created_at: Type.String(),
  updated_at: Type.String(),
  creator_user_id: Nullable(Type.String()),
  external_user: Nullable(Type.String()),
  workspace_id: Type.String(),
  expires_at: Nullable(Type.String({ format: "date-time" })),
});

export const KeyResponse = Type.Object({ data: KeyRecord });
export const CreatedKeyResponse = Type.Object({
  data: KeyRecord,
  key: Type.String({ description: "The key itself: shown once, never stored" }),
});
export const KeyListResponse = Type.Object({ data: Type.Array(KeyRecord) });

export const CurrentKey = Type.Object({
  label: Type.String(),
  ...UsageFields,
  creator_user_id: Nullable(Type.String()),
  expires_at: Nullable(Type.String({ format: "date-time" })),
  is_free_tier: Type.Boolean(),
  is_management_key: Type.Boolean(),
  is_provisioning_key: Type.Boolean({ deprecated: true }),
  rate_limit: Type.Object({ interval: Type.String(), note: Type.String(), requests: Type.Integer() }),
  allowed_data_regions: Type.Array(Type.String()),
  free_model_daily_requests: Type.Object({
    limit: Type.Integer(),
    remaining: Type.Integer(),
    used: Type.Integer(),
  }),
  organization_id: Type.String(),
  workspace_id: Type.String(),
});
export const CurrentKeyResponse = Type.Object({ data: CurrentKey });
