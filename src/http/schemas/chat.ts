import { Type } from "typebox";
import { Nullable } from "./common.js";

/**
 * POST /chat/completions: the OpenAI body plus the router extras (docs/gateway.md "Calling it"). Known
 * fields are typed; every other field is passed to the upstream unchanged.
 */
const Role = Type.Enum(["system", "developer", "user", "assistant", "tool"]);

export const ChatMessage = Type.Object(
  {
    role: Role,
    content: Type.Optional(
      Nullable(Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))])),
    ),
    name: Type.Optional(Type.String()),
    tool_call_id: Type.Optional(Type.String()),
    tool_calls: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: true },
);

const Slugs = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 64 });

export const ProviderPreferences = Type.Object(
  {
    order: Type.Optional(Nullable(Slugs)),
    only: Type.Optional(Nullable(Slugs)),
    ignore: Type.Optional(Nullable(Slugs)),
    allow_fallbacks: Type.Optional(Nullable(Type.Boolean())),
    require_parameters: Type.Optional(Nullable(Type.Boolean())),
    max_price: Type.Optional(
      Nullable(
        Type.Object(
          {
            prompt: Type.Optional(
              Nullable(Type.Union([Type.Number({ minimum: 0 }), Type.String({ maxLength: 64 })])),
            ),
            completion: Type.Optional(
              Nullable(Type.Union([Type.Number({ minimum: 0 }), Type.String({ maxLength: 64 })])),
            ),
          },
          { additionalProperties: true },
        ),
      ),
    ),
  },
  { additionalProperties: true },
);

const Tokens = Type.Integer({ minimum: 1, maximum: 10_000_000 });

export const ChatRequestBody = Type.Object(
  {
    messages: Type.Array(ChatMessage, { minItems: 1, maxItems: 10_000 }),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    models: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 16 }),
    ),
    stream: Type.Optional(Nullable(Type.Boolean())),
    stream_options: Type.Optional(Nullable(Type.Object({ include_usage: Type.Optional(Type.Boolean()) }))),
    max_tokens: Type.Optional(Nullable(Tokens)),
    max_completion_tokens: Type.Optional(Nullable(Tokens)),
    // One completion per request: the hold covers one (the SDK's request has no `n` either).
    n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1 }))),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    provider: Type.Optional(Nullable(ProviderPreferences)),
    user: Type.Optional(Type.String({ maxLength: 1024 })),
    session_id: Type.Optional(Type.String({ maxLength: 256 })),
    tools: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: true },
);
