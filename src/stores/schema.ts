import type { Generated } from "kysely";

/**
 * Row types of the record store, shared by every dialect. Conventions that keep one query layer
 * for SQLite and PostgreSQL:
 * - timestamps are ISO 8601 UTC strings (they sort as text);
 * - booleans are 0/1 integers;
 * - money is a 64-bit integer of nano-USD (drivers return bigint or string: normalise with toBigInt);
 * - JSON values are text.
 */
export type Bool = number;
export type Int64 = bigint | number | string;

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: string;
  /** The credit line in nano-USD, null when not set (migration 012; docs/api-notes.md "Credits"). */
  credit_line_nano: Int64 | null;
}

export interface WorkspacesTable {
  id: string;
  organization_id: string;
  name: string;
  slug: string;
  description: string | null;
  is_default: Bool;
  default_text_model: string | null;
  default_image_model: string | null;
  default_provider_sort: string | null;
  /** JSON array of strings, or null. */
  disabled_server_tools: string | null;
  /** JSON array of integers, or null (= all keys). */
  io_logging_api_key_ids: string | null;
  io_logging_sampling_rate: number;
  is_data_discount_logging_enabled: Bool;
  is_observability_broadcast_enabled: Bool;
  is_observability_io_logging_enabled: Bool;
  include_byok_in_budgets: Bool;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface ApiKeysTable {
  /** Numeric id (analytics `api_key_id`). */
  id: Generated<Int64>;
  hash: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  label: string;
  is_management: Bool;
  disabled: Bool;
  limit_nano: Int64 | null;
  limit_reset: string | null;
  include_byok_in_limit: Bool;
  creator_user_id: string | null;
  external_user: string | null;
  external_key_hash: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface BudgetsTable {
  id: string;
  workspace_id: string;
  /** daily | weekly | monthly | lifetime */
  reset_interval: string;
  limit_nano: Int64;
  created_at: string;
  updated_at: string;
}

export interface DestinationsTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  type: string;
  name: string | null;
  enabled: Bool;
  privacy_mode: Bool;
  broadcast_generation_cost: Bool;
  broadcast_generation_identity: Bool;
  broadcast_generation_request_context: Bool;
  sampling_rate: number;
  /** JSON array of key hashes, or null (= all keys). */
  api_key_hashes: string | null;
  /** JSON FilterRulesConfig, or null. */
  filter_rules: string | null;
  /** JSON array of regions. */
  regions: string;
  /** The whole config object, AES-256-GCM encrypted (see lib/secret-box.ts). */
  config_ciphertext: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** The usage ledger: one row per (scope, id, window kind, window index). */
export interface UsageCountersTable {
  /** "key" (scope_id = key hash) or "workspace" (scope_id = workspace id). */
  scope: string;
  scope_id: string;
  /** day | week | month | all */
  window: string;
  window_index: number;
  organization_id: string;
  usage_nano: Int64;
  byok_nano: Int64;
}

/** Generation ids an organization has accepted (ingest idempotency). */
export interface GenerationsSeenTable {
  organization_id: string;
  id: string;
}

/** Latest seen title of an app (analytics label of the `app` dimension). */
export interface AppLabelsTable {
  organization_id: string;
  app_id: Int64;
  title: string;
}

/** Latest seen name and email of a user (analytics label of the `user` dimension). */
export interface UserLabelsTable {
  organization_id: string;
  user_id: string;
  name: string | null;
  email: string | null;
}

/** Bumped by every ingest that accepts a record; analytics caches key on it. */
export interface ActivityVersionsTable {
  organization_id: string;
  version: Int64;
}

/** An ingest batch between its activity-store write and its record-store commit (migration 003). */
export interface IngestBufferTable {
  seq: Generated<Int64>;
  /** The activity store the batch is for (host and file of an embedded DuckDB). */
  owner: string;
  organization_id: string;
  row_count: number;
  /** Names the batch's rows in the store's ingest log (src/stores/segment-log.ts). */
  token: string;
}

/** An accepted batch waiting for its Broadcast fan-out or deliveries (migration 007). */
export interface BroadcastBatchesTable {
  seq: Generated<Int64>;
  organization_id: string;
  created_at_ms: Int64;
  /** The batch's rows as ingest column texts (column-texts.ts payloadOf). */
  payload: string;
  /** JSON object: generation id → LiveContext (served content); null when none. */
  contexts: string | null;
  /** JSON array: the destinations the batch is offered to (enabled at acceptance; a replay's one). */
  destination_ids: string;
  fanned_out: Bool;
}

/** One destination's delivery of the generations it selected from one batch (migration 007). */
export interface BroadcastDeliveriesTable {
  id: Generated<Int64>;
  destination_id: string;
  organization_id: string;
  batch_seq: Int64;
  /** JSON array of generation ids. */
  ids: string;
  item_count: number;
  min_created_ms: Int64;
  max_created_ms: Int64;
  /** pending | delivered | dead */
  state: string;
  attempts: number;
  created_at_ms: Int64;
  next_attempt_ms: Int64;
  lease_owner: string | null;
  lease_until_ms: Int64 | null;
  last_error: string | null;
  finished_at_ms: Int64 | null;
}

export interface BroadcastDestinationStatsTable {
  destination_id: string;
  last_success_ms: Int64 | null;
  last_error: string | null;
  last_error_ms: Int64 | null;
  cap_dropped: Int64;
}

/** An open hold of worst-case cost (migration 006). */
export interface GatewayReservationsTable {
  id: string;
  organization_id: string;
  key_hash: string;
  workspace_id: string;
  amount_nano: Int64;
  counts_key: Bool;
  counts_workspace: Bool;
  /** UTC day (dayIndex) of the hold's request, where its charge lands (migration 011); null: every window. */
  day_index: Int64 | null;
  expires_at_ms: Int64;
  /** The member who created the hold's key, for member guardrail budgets (migration 014); null: none. */
  member_id: string | null;
}

/** Gateway-only facts of a served generation (migration 006). */
export interface GatewayGenerationsTable {
  organization_id: string;
  id: string;
  key_hash: string;
  workspace_id: string;
  created_at: string;
  detail: string;
}

/** An organization's own provider credential (migration 006). */
export interface ByokKeysTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  provider: string;
  name: string | null;
  label: string;
  key_ciphertext: string;
  disabled: Bool;
  is_fallback: Bool;
  is_required: Bool;
  is_byok_only: Bool;
  declared_zdr: Bool | null;
  sort_order: number;
  allowed_models: string | null;
  allowed_user_ids: string | null;
  allowed_api_key_hashes: string | null;
  created_at: string;
  updated_at: string;
}

/** A served generation's prompt and completion, sealed (migration 012; docs/content-logging.md). */
export interface GenerationContentTable {
  organization_id: string;
  id: string;
  workspace_id: string;
  key_hash: string;
  created_at: string;
  /** The StoredContent JSON, AES-256-GCM encrypted (lib/secret-box.ts). */
  content_ciphertext: string;
}

/** One submission of POST /generation/feedback (migration 012). */
export interface GenerationFeedbackTable {
  id: string;
  organization_id: string;
  generation_id: string;
  category: string;
  comment: string | null;
  key_hash: string;
  created_at: string;
}

/**
 * A feedback submission not yet written to the activity store (migration 015;
 * src/domain/generation-feedback/feedback-activity.ts).
 */
export interface FeedbackActivityQueueTable {
  feedback_id: string;
  organization_id: string;
  generation_id: string;
  /** The generation's created_at (ISO 8601). */
  generation_created_at: string;
  category: string;
  /** When the feedback was submitted (ISO 8601). */
  created_at: string;
}

/**
 * Generations accepted while a shared activity store could not take them (migration 016;
 * src/domain/ingest/pipeline/pending-activity.ts).
 */
export interface ActivityPendingTable {
  seq: Generated<Int64>;
  organization_id: string;
  row_count: number;
  /** The rows and their tags as JSON (repos/pending-repo.ts). */
  payload: string;
  /** When the batch was parked (ISO 8601). */
  created_at: string;
}

/** A person of an organization (migration 014; docs/members.md). */
export interface MembersTable {
  /** `user_…` */
  id: string;
  organization_id: string;
  /** Lower-cased. */
  email: string;
  first_name: string | null;
  last_name: string | null;
  /** org:admin | org:member */
  role: string;
  created_at: string;
  updated_at: string;
}

/** A member's place in a non-default workspace (migration 014). */
export interface WorkspaceMembersTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  user_id: string;
  /** admin | member */
  role: string;
  created_at: string;
}

/** A guardrail (migration 014; docs/guardrails.md). */
export interface GuardrailsTable {
  id: string;
  organization_id: string;
  workspace_id: string | null;
  /** A workspace's default guardrail (its id derived from the workspace's). */
  is_default: Bool;
  name: string;
  description: string | null;
  limit_nano: Int64 | null;
  reset_interval: string | null;
  include_byok_in_budgets: Bool;
  /** JSON: the list fields, flags and content filters (src/domain/guardrails/). */
  rules: string;
  created_at: string;
  updated_at: string;
}

/** A key's guardrail (at most one per key; migration 014). */
export interface GuardrailKeyAssignmentsTable {
  id: string;
  organization_id: string;
  guardrail_id: string;
  key_hash: string;
  assigned_by: string | null;
  created_at: string;
}

/** A member's guardrail (at most one per member; migration 014). */
export interface GuardrailMemberAssignmentsTable {
  id: string;
  organization_id: string;
  guardrail_id: string;
  user_id: string;
  assigned_by: string | null;
  created_at: string;
}

export interface Database {
  organizations: OrganizationsTable;
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  budgets: BudgetsTable;
  destinations: DestinationsTable;
  usage_counters: UsageCountersTable;
  generations_seen: GenerationsSeenTable;
  app_labels: AppLabelsTable;
  user_labels: UserLabelsTable;
  activity_versions: ActivityVersionsTable;
  ingest_buffer: IngestBufferTable;
  broadcast_batches: BroadcastBatchesTable;
  broadcast_deliveries: BroadcastDeliveriesTable;
  broadcast_destination_stats: BroadcastDestinationStatsTable;
  gateway_reservations: GatewayReservationsTable;
  gateway_generations: GatewayGenerationsTable;
  byok_keys: ByokKeysTable;
  generation_content: GenerationContentTable;
  generation_feedback: GenerationFeedbackTable;
  feedback_activity_queue: FeedbackActivityQueueTable;
  activity_pending: ActivityPendingTable;
  members: MembersTable;
  workspace_members: WorkspaceMembersTable;
  guardrails: GuardrailsTable;
  guardrail_key_assignments: GuardrailKeyAssignmentsTable;
  guardrail_member_assignments: GuardrailMemberAssignmentsTable;
}
