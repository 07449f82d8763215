/** Closed value sets of workspace settings, shared by the wire schemas and the domain. */
export const PROVIDER_SORTS = ["price", "throughput", "latency", "exacto"] as const;

export const SERVER_TOOLS = [
  "openrouter:advisor",
  "openrouter:apply_patch",
  "openrouter:bash",
  "openrouter:datetime",
  "openrouter:fusion",
  "openrouter:image_generation",
  "openrouter:experimental__search_models",
  "openrouter:shell",
  "openrouter:subagent",
  "openrouter:tool_search",
  "openrouter:web_fetch",
  "openrouter:web_search",
] as const;

export type ProviderSort = (typeof PROVIDER_SORTS)[number];
export type ServerTool = (typeof SERVER_TOOLS)[number];

/** Slugs: lowercase letters and digits in groups joined by single hyphens. */
export const SLUG_PATTERN = "^[a-z0-9]+(?:-[a-z0-9]+)*$";

/** Settings a caller can give on create (name and slug required there) or update (all optional). */
export interface WorkspaceInput {
  name?: string;
  slug?: string;
  description?: string | null;
  default_text_model?: string | null;
  default_image_model?: string | null;
  default_provider_sort?: ProviderSort | null;
  disabled_server_tools?: ServerTool[] | null;
  io_logging_api_key_ids?: number[] | null;
  io_logging_sampling_rate?: number;
  is_data_discount_logging_enabled?: boolean;
  is_observability_broadcast_enabled?: boolean;
  is_observability_io_logging_enabled?: boolean;
}
