import type { Attrs } from "./genai-attributes.js";
import type { GenerationView, SpanView } from "./generation-view.js";

/**
 * Langfuse's own OTLP attribute directives (`langfuse.*`, highest precedence in its mapping;
 * langfuse.com/integrations/native/opentelemetry#property-mapping): the generation is a
 * GENERATION observation with model, usage and cost details; attempts and the wrapper are SPANs.
 */
export function langfuseAttributes(v: GenerationView, span: SpanView): Attrs {
  if (span.role !== "generation") {
    return {
      "langfuse.observation.type": "span",
      "langfuse.observation.level": span.error ? "ERROR" : "DEFAULT",
    };
  }
  const g = v.g;
  const a: Attrs = {
    "langfuse.observation.type": "generation",
    "langfuse.observation.level": span.error ? "ERROR" : "DEFAULT",
    "langfuse.observation.model.name": g.model,
    "langfuse.observation.usage_details": JSON.stringify({
      input: g.tokensPrompt,
      output: g.tokensCompletion,
      total: g.tokensPrompt + g.tokensCompletion,
      cache_read_input_tokens: g.tokensCached,
      reasoning_tokens: g.tokensReasoning,
    }),
    "langfuse.trace.name": v.traceName,
  };
  if (g.streamed)
    a["langfuse.observation.completion_start_time"] = new Date(g.createdAtMs + g.latencyMs).toISOString();
  if (g.params !== null) a["langfuse.observation.model.parameters"] = JSON.stringify(g.params);
  if (g.cost) {
    const cost: Record<string, number> = { total: g.cost.totalUsd };
    if (g.cost.promptUsd !== null) cost.input = g.cost.promptUsd;
    if (g.cost.completionUsd !== null) cost.output = g.cost.completionUsd;
    a["langfuse.observation.cost_details"] = JSON.stringify(cost);
  }
  if (v.userId !== null) a["langfuse.user.id"] = v.userId;
  if (v.sessionId !== null) a["langfuse.session.id"] = v.sessionId;
  for (const [key, value] of Object.entries(v.metadata)) a[`langfuse.trace.metadata.${key}`] = value;
  if (v.input !== null) {
    const input = JSON.stringify(v.input);
    const output = JSON.stringify(v.output ?? "");
    a["langfuse.observation.input"] = input;
    a["langfuse.observation.output"] = output;
    a["langfuse.trace.input"] = input;
    a["langfuse.trace.output"] = output;
  }
  return a;
}
