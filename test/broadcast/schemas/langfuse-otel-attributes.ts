/**
 * The subset of Langfuse's OpenTelemetry property mapping Gatehouse relies on, written from
 * langfuse.com/integrations/native/opentelemetry ("Property mapping") and the attribute keys of
 * its SDKs (LangfuseOtelSpanAttributes): the `langfuse.*` directives, as span attributes decoded
 * from OTLP. Observation types and levels are Langfuse's enums; usage and cost details are JSON
 * objects of numbers; model parameters a JSON object.
 */
const jsonObjectOfNumbers = {
  type: "string",
  contentMediaType: "application/json",
} as const;

export const LANGFUSE_GENERATION_ATTRIBUTES = {
  type: "object",
  required: [
    "langfuse.observation.type",
    "langfuse.observation.model.name",
    "langfuse.observation.usage_details",
    "langfuse.trace.name",
  ],
  properties: {
    "langfuse.observation.type": {
      enum: [
        "span",
        "generation",
        "event",
        "agent",
        "tool",
        "chain",
        "retriever",
        "evaluator",
        "embedding",
        "guardrail",
      ],
    },
    "langfuse.observation.level": { enum: ["DEBUG", "DEFAULT", "WARNING", "ERROR"] },
    "langfuse.observation.model.name": { type: "string", minLength: 1 },
    "langfuse.observation.model.parameters": { type: "string" },
    "langfuse.observation.usage_details": jsonObjectOfNumbers,
    "langfuse.observation.cost_details": jsonObjectOfNumbers,
    "langfuse.observation.completion_start_time": { type: "string", format: "date-time" },
    "langfuse.observation.input": { type: "string" },
    "langfuse.observation.output": { type: "string" },
    "langfuse.trace.name": { type: "string" },
    "langfuse.trace.input": { type: "string" },
    "langfuse.trace.output": { type: "string" },
    "langfuse.user.id": { type: "string" },
    "langfuse.session.id": { type: "string" },
  },
  patternProperties: { "^langfuse\\.trace\\.metadata\\.": { type: "string" } },
} as const;

/** Decoded `usage_details` / `cost_details`: a flat object of numbers. */
export const NUMBER_MAP = { type: "object", additionalProperties: { type: "number", minimum: 0 } } as const;
