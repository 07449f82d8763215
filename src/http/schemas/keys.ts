import { Type } from "typebox";
import { CurrentKeySchema } from "../../domain/keys/current-key.js";
import { KeyRecordSchema, LimitResetSchema } from "../../domain/keys/key-record.js";
import { Nullable, UsdAmount, Uuid } from "./common.js";

/** Wire schemas of the API keys resource (docs/wire-compatibility.md "Keys record"). */

const KeyName = Type.String({ minLength: 1, maxLength: 200 });

export const CreateKeyBody = Type.Object({
  name: KeyName,
  limit: Type.Optional(Nullable(UsdAmount)),
  limit_reset: Type.Optional(Nullable(LimitResetSchema)),
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
  limit_reset: Type.Optional(Nullable(LimitResetSchema)),
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

export const KeyResponse = Type.Object({ data: KeyRecordSchema });
export const CreatedKeyResponse = Type.Object({
  data: KeyRecordSchema,
  key: Type.String({ description: "The key itself: shown once, never stored" }),
});
export const KeyListResponse = Type.Object({ data: Type.Array(KeyRecordSchema) });

export const CurrentKeyResponse = Type.Object({ data: CurrentKeySchema });
