/**
 * The subset of Datadog's LLM Observability spans intake body that Gatehouse relies on, written
 * from the HTTP API reference (docs.datadoghq.com/llm_observability/instrumentation/api, "Spans
 * API": SpansRequestData → SpansPayload → Span → Meta / Metrics). Required fields as documented;
 * additionalProperties is closed where the reference lists every field, so a misspelt key fails.
 */
const io = {
  type: "object",
  additionalProperties: false,
  properties: {
    value: { type: "string" },
    messages: {
      type: "array",
      items: {
        type: "object",
        required: ["content"],
        additionalProperties: false,
        properties: { content: { type: "string" }, role: { type: "string" } },
      },
    },
  },
} as const;

export const DATADOG_SPANS_REQUEST = {
  type: "object",
  required: ["data"],
  additionalProperties: false,
  properties: {
    data: {
      type: "object",
      required: ["type", "attributes"],
      additionalProperties: false,
      properties: {
        type: { const: "span" },
        attributes: {
          type: "object",
          required: ["ml_app", "spans"],
          additionalProperties: false,
          properties: {
            ml_app: { type: "string", minLength: 1 },
            session_id: { type: "string" },
            tags: { type: "array", items: { type: "string", pattern: "^[^:]+:.+$" } },
            spans: {
              type: "array",
              items: {
                type: "object",
                required: ["parent_id", "trace_id", "span_id", "name", "start_ns", "duration", "meta"],
                additionalProperties: false,
                properties: {
                  parent_id: { type: "string", minLength: 1 },
                  trace_id: { type: "string", minLength: 1 },
                  span_id: { type: "string", minLength: 1 },
                  name: { type: "string", minLength: 1 },
                  start_ns: { type: "integer", minimum: 0 },
                  duration: { type: "number", minimum: 0 },
                  status: { enum: ["ok", "error"] },
                  session_id: { type: "string" },
                  tags: { type: "array", items: { type: "string" } },
                  metrics: { type: "object", additionalProperties: { type: "number" } },
                  meta: {
                    type: "object",
                    additionalProperties: false,
                    properties: {
                      kind: { enum: ["llm", "workflow", "agent", "tool", "task", "embedding", "retrieval"] },
                      error: {
                        type: "object",
                        additionalProperties: false,
                        properties: {
                          message: { type: "string" },
                          stack: { type: "string" },
                          type: { type: "string" },
                        },
                      },
                      input: io,
                      output: io,
                      metadata: { type: "object" },
                      model_name: { type: "string" },
                      model_provider: { type: "string" },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;
