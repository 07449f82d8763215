import { Type } from "typebox";
import { MAX_RECORDS } from "../../domain/ingest/validate-generations.js";
import { Nullable } from "./common.js";

/**
 * Wire schemas of POST /activity/generations. The record schema documents the operation in the
 * OpenAPI document; the body itself is checked by the ingest validator (all records at once, so
 * that the answer lists every problem), not by Ajv.
 */
const Usd = (description: string) => Type.Optional(Type.Number({ minimum: 0, description }));
const Text = (description: string) => Type.Optional(Nullable(Type.String({ description })));
const Flag = (description: string) => Type.Optional(Type.Boolean({ description }));
const Count = (description: string) => Type.Optional(Type.Integer({ minimum: 0, description }));

export const GenerationRecord = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 128,
    description: "Idempotency key, unique within the organization",
  }),
  created_at: Type.String({ description: "RFC 3339 with seconds and an offset: when the request started" }),
  api_key_hash: Type.String({ pattern: "^[0-9a-f]{64}$", description: "The key that made the request" }),
  workspace_id: Type.Optional(
    Nullable(
      Type.String({ format: "uuid", description: "Omitted: the key's workspace; null: legacy activity" }),
    ),
  ),
  model: Type.String({ description: "provider/model permaslug" }),
  provider: Type.String(),
  variant: Text("Model variant (free, thinking, ...)"),
  app_id: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  app_title: Text("Label of app_id; the latest seen wins"),
  user_id: Text("Default: the key's creator_user_id"),
  user_name: Text("Label of user_id; the latest seen wins"),
  user_email: Text("Label of user_id; the latest seen wins"),
  external_user: Text("End-user id supplied by the caller"),
  origin: Text("Where the request came from"),
  country: Text("ISO 3166-1 alpha-2"),
  finish_reason: Text("stop, length, tool_calls, content_filter, error, ..."),
  tokens_prompt: Type.Integer({ minimum: 0 }),
  tokens_completion: Type.Integer({ minimum: 0 }),
  tokens_reasoning: Count("Default 0"),
  tokens_cached: Count("Default 0"),
  is_byok: Flag("Default false"),
  usage: Type.Number({ minimum: 0, description: "USD charged to credits" }),
  byok_usage_inference: Usd("USD billed to the organization's own provider key"),
  usage_upstream: Usd("USD"),
  usage_cache: Usd("USD"),
  usage_data: Type.Optional(Type.Number({ description: "USD; may be negative" })),
  usage_web: Usd("USD"),
  usage_upstream_web: Usd("USD"),
  usage_file: Usd("USD"),
  usage_upstream_file: Usd("USD"),
  usage_web_fetch: Usd("USD"),
  usage_upstream_web_fetch: Usd("USD"),
  latency_ms: Type.Number({ minimum: 0, description: "Time to first token" }),
  generation_time_ms: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
  streamed: Flag("Default false"),
  cancelled: Flag("Default false"),
  response_cached: Flag("Default false"),
  guardrail_invoked: Flag("Default false"),
  classifications: Type.Optional(
    Type.Array(
      Type.Object({
        classifier_id: Type.String({ format: "uuid" }),
        dimension_name: Type.String({ pattern: "^[a-z][a-z0-9]*(_[a-z0-9]+)*$" }),
        value: Type.String({ minLength: 1, maxLength: 256 }),
      }),
    ),
  ),
});

export const IngestBody = Type.Object({
  generations: Type.Array(GenerationRecord, { minItems: 1, maxItems: MAX_RECORDS }),
});

export const IngestResponse = Type.Object({
  data: Type.Object({
    accepted: Type.Integer({ minimum: 0 }),
    duplicates: Type.Integer({ minimum: 0 }),
  }),
});

/** `?broadcast=false` loads history without offering it to destinations (gatehouse import). */
export const IngestQuery = Type.Object(
  {
    broadcast: Type.Optional(
      Type.Union([Type.Literal("true"), Type.Literal("false")], {
        description: "Offer the records to the workspace's observability destinations (default true)",
      }),
    ),
  },
  { additionalProperties: false },
);
