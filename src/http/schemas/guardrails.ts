import { Type } from "typebox";
import { KeyAssignmentSchema, MemberAssignmentSchema } from "../../domain/guardrails/assignment-record.js";
import { GuardrailRecordSchema, SCAN_SCOPES } from "../../domain/guardrails/guardrail-record.js";
import {
  BUILTIN_FILTER_SLUGS,
  DATA_REGIONS,
  GUARDRAIL_ACTIONS,
  GUARDRAIL_RESET_INTERVALS,
} from "../../domain/guardrails/guardrail-policy.js";
import { StringEnum } from "../../lib/typebox.js";
import { Nullable, PageQuery, UsdAmount, Uuid } from "./common.js";

/** Wire schemas of the guardrails resource (docs/guardrails.md "Fields and validation"). */

const Names = Nullable(
  Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 1000 }),
);
const Flag = Type.Optional(Nullable(Type.Boolean()));

const fields = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  limit_usd: Type.Optional(Nullable(UsdAmount)),
  reset_interval: Type.Optional(Nullable(StringEnum(GUARDRAIL_RESET_INTERVALS))),
  include_byok_in_budgets: Type.Optional(Type.Boolean()),
  allowed_models: Type.Optional(Names),
  ignored_models: Type.Optional(Names),
  allowed_providers: Type.Optional(Names),
  ignored_providers: Type.Optional(Names),
  allowed_data_regions: Type.Optional(
    Nullable(Type.Array(StringEnum(DATA_REGIONS), { minItems: 1, maxItems: DATA_REGIONS.length * 2 })),
  ),
  enforce_zdr: Flag,
  enforce_zdr_anthropic: Flag,
  enforce_zdr_openai: Flag,
  enforce_zdr_google: Flag,
  enforce_zdr_xai: Flag,
  enforce_zdr_other: Flag,
  enable_free_model_publication: Flag,
  enable_free_model_training: Flag,
  enable_paid_model_training: Flag,
  content_filters: Type.Optional(
    Nullable(
      Type.Array(
        Type.Object({
          pattern: Type.String({ minLength: 1, maxLength: 100_000 }),
          action: StringEnum(GUARDRAIL_ACTIONS),
          label: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
        }),
        { maxItems: 100 },
      ),
    ),
  ),
  content_filter_builtins: Type.Optional(
    Nullable(
      Type.Array(
        Type.Object({
          slug: StringEnum(BUILTIN_FILTER_SLUGS),
          action: StringEnum(GUARDRAIL_ACTIONS),
          label: Type.Optional(
            Nullable(Type.String({ maxLength: 1000, description: "Ignored: the system assigns the label" })),
          ),
          scan_scope: Type.Optional(StringEnum(SCAN_SCOPES)),
        }),
        { maxItems: BUILTIN_FILTER_SLUGS.length * 2 },
      ),
    ),
  ),
};

const Name = Type.String({ minLength: 1, maxLength: 200 });

export const CreateGuardrailBody = Type.Object({
  name: Name,
  workspace_id: Type.Optional(Uuid),
  ...fields,
});

export const UpdateGuardrailBody = Type.Object({ name: Type.Optional(Name), ...fields });

/** Any text: an id that is not a UUID names no guardrail, 404 (get and delete map no 400). */
export const GuardrailParams = Type.Object({ id: Type.String() });

export const GuardrailListQuery = Type.Object({ ...PageQuery, workspace_id: Type.Optional(Uuid) });
export const AssignmentListQuery = Type.Object(PageQuery);

const Bulk = (what: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 256, description: what }), {
    minItems: 1,
    maxItems: 1000,
  });
export const KeyHashesBody = Type.Object({ key_hashes: Bulk("An API key's hash") });
export const MemberIdsBody = Type.Object({ member_user_ids: Bulk("An organization member's id") });

export const GuardrailResponse = Type.Object({ data: GuardrailRecordSchema });
export const GuardrailListResponse = Type.Object({
  data: Type.Array(GuardrailRecordSchema),
  total_count: Type.Integer(),
});
export const KeyAssignmentListResponse = Type.Object({
  data: Type.Array(KeyAssignmentSchema),
  total_count: Type.Integer(),
});
export const MemberAssignmentListResponse = Type.Object({
  data: Type.Array(MemberAssignmentSchema),
  total_count: Type.Integer(),
});
export const AssignedResponse = Type.Object({ assigned_count: Type.Integer() });
export const UnassignedResponse = Type.Object({ unassigned_count: Type.Integer() });
