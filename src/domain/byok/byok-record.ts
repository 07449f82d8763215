import { Type, type Static } from "typebox";
import { Nullable } from "../../lib/typebox.js";
import type { ByokRow } from "./byok-repo.js";

/** The wire form of a BYOK key (SDK BYOKKey); the raw key is never part of it. */
export const ByokKeyRecordSchema = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  label: Type.String(),
  name: Nullable(Type.String()),
  created_at: Type.String(),
  disabled: Type.Boolean(),
  is_byok_only: Type.Boolean(),
  is_fallback: Type.Boolean(),
  is_required: Type.Boolean(),
  sort_order: Type.Integer(),
  declared_zdr: Nullable(Type.Boolean()),
  allowed_api_key_hashes: Nullable(Type.Array(Type.String())),
  allowed_models: Nullable(Type.Array(Type.String())),
  allowed_user_ids: Nullable(Type.Array(Type.String())),
  workspace_id: Nullable(Type.String()),
});
export type ByokKeyRecord = Static<typeof ByokKeyRecordSchema>;

const list = (v: string | null): string[] | null => (v === null ? null : (JSON.parse(v) as string[]));
const bool = (v: number) => Number(v) === 1;

export function toByokKey(r: ByokRow): ByokKeyRecord {
  return {
    id: r.id,
    provider: r.provider,
    label: r.label,
    name: r.name,
    created_at: r.created_at,
    disabled: bool(r.disabled),
    is_byok_only: bool(r.is_byok_only),
    is_fallback: bool(r.is_fallback),
    is_required: bool(r.is_required),
    sort_order: Number(r.sort_order),
    declared_zdr: r.declared_zdr === null ? null : bool(r.declared_zdr),
    allowed_api_key_hashes: list(r.allowed_api_key_hashes),
    allowed_models: list(r.allowed_models),
    allowed_user_ids: list(r.allowed_user_ids),
    workspace_id: r.workspace_id,
  };
}
