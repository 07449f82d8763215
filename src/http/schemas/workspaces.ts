import { Type } from "typebox";
import { WorkspaceRecordSchema } from "../../domain/workspaces/workspace-record.js";
import { PROVIDER_SORTS, SERVER_TOOLS, SLUG_PATTERN } from "../../domain/workspaces/workspace-settings.js";
import { Nullable, PageQuery } from "./common.js";

/** Wire schemas of the workspaces resource (docs/wire-compatibility.md "Workspaces and budgets records"). */

const Name = Type.String({ minLength: 1, maxLength: 100 });
const Slug = Type.String({ minLength: 1, maxLength: 50, pattern: SLUG_PATTERN });
const ModelName = Nullable(Type.String({ minLength: 1, maxLength: 200 }));

const settings = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  default_text_model: Type.Optional(ModelName),
  default_image_model: Type.Optional(ModelName),
  default_provider_sort: Type.Optional(Nullable(Type.Enum([...PROVIDER_SORTS]))),
  disabled_server_tools: Type.Optional(
    Nullable(Type.Array(Type.Enum([...SERVER_TOOLS]), { maxItems: SERVER_TOOLS.length * 2 })),
  ),
  // Safe integers only: the SDK reads them back as z.int(), which refuses anything past 2^53 - 1,
  // so one such id made every read of the workspace (get, list) fail there.
  io_logging_api_key_ids: Type.Optional(
    Nullable(Type.Array(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), { maxItems: 1000 })),
  ),
  io_logging_sampling_rate: Type.Optional(Type.Number({ minimum: 0.0001, maximum: 1 })),
  is_data_discount_logging_enabled: Type.Optional(Type.Boolean()),
  is_observability_broadcast_enabled: Type.Optional(Type.Boolean()),
  is_observability_io_logging_enabled: Type.Optional(Type.Boolean()),
};

export const CreateWorkspaceBody = Type.Object({ name: Name, slug: Slug, ...settings });
export const UpdateWorkspaceBody = Type.Object({
  name: Type.Optional(Name),
  slug: Type.Optional(Slug),
  ...settings,
});

export const WorkspaceRefParams = Type.Object({ id: Type.String({ minLength: 1 }) });
export const ListWorkspacesQuery = Type.Object(PageQuery);
export const DeleteWorkspaceQuery = Type.Object({
  confirm_default_workspace_deletion: Type.Optional(Type.Boolean()),
});

export const WorkspaceResponse = Type.Object({ data: WorkspaceRecordSchema });
export const WorkspaceListResponse = Type.Object({
  data: Type.Array(WorkspaceRecordSchema),
  total_count: Type.Integer(),
});
