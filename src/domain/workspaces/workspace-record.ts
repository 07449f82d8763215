import { Type, type Static } from "typebox";
import { nameUuid } from "../../lib/name-uuid.js";
import { Nullable } from "../../lib/typebox.js";
import type { WorkspaceRow } from "./workspace-repo.js";

/** The wire form of a workspace (every field the official SDK's `Workspace` schema reads). */
export const WorkspaceRecordSchema = Type.Object({
  id: Type.String({ format: "uuid" }),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Nullable(Type.String()),
  created_by: Nullable(Type.String()),
  default_guardrail_id: Type.String({ format: "uuid" }),
  default_text_model: Nullable(Type.String()),
  default_image_model: Nullable(Type.String()),
  default_provider_sort: Nullable(Type.String()),
  disabled_server_tools: Nullable(Type.Array(Type.String())),
  include_byok_in_budgets: Type.Boolean(),
  io_logging_api_key_ids: Nullable(Type.Array(Type.Integer())),
  io_logging_sampling_rate: Type.Number(),
  is_data_discount_logging_enabled: Type.Boolean(),
  is_observability_broadcast_enabled: Type.Boolean(),
  is_observability_io_logging_enabled: Type.Boolean(),
});
export type WorkspaceRecord = Static<typeof WorkspaceRecordSchema>;

/** Namespace of the name-based (RFC 4122 version 5) UUIDs of default guardrails. */
const GUARDRAIL_NAMESPACE = "6f1d3c2a-9b7e-5c4d-8a1f-2e3b4c5d6e7f";

/**
 * The id of a workspace's default guardrail: a version-5 UUID of the workspace id, so it is stable
 * across reads, instances and restarts without being stored.
 */
export function defaultGuardrailId(workspaceId: string): string {
  return nameUuid(GUARDRAIL_NAMESPACE, workspaceId.toLowerCase());
}

const parseJsonArray = <T>(text: string | null): T[] | null =>
  text === null ? null : (JSON.parse(text) as T[]);

export function toWorkspaceRecord(row: WorkspaceRow): WorkspaceRecord {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    created_at: row.created_at,
    updated_at: row.updated_at,
    created_by: row.created_by,
    default_guardrail_id: defaultGuardrailId(row.id),
    default_text_model: row.default_text_model,
    default_image_model: row.default_image_model,
    default_provider_sort: row.default_provider_sort,
    disabled_server_tools: parseJsonArray<string>(row.disabled_server_tools),
    include_byok_in_budgets: Number(row.include_byok_in_budgets) === 1,
    io_logging_api_key_ids: parseJsonArray<number>(row.io_logging_api_key_ids),
    io_logging_sampling_rate: Number(row.io_logging_sampling_rate),
    is_data_discount_logging_enabled: Number(row.is_data_discount_logging_enabled) === 1,
    is_observability_broadcast_enabled: Number(row.is_observability_broadcast_enabled) === 1,
    is_observability_io_logging_enabled: Number(row.is_observability_io_logging_enabled) === 1,
  };
}
