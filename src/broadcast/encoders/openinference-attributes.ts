import type { Attrs } from "./genai-attributes.js";
import type { GenerationView, SpanView } from "./generation-view.js";

/**
 * OpenInference attributes, the convention Arize reads (github.com/Arize-ai/openinference;
 * docs/wire-compatibility.md "OpenInference / GenAI attributes"): span kind, model, token counts, and
 * input/output values.
 */
export function openInferenceAttributes(v: GenerationView, span: SpanView): Attrs {
  if (span.role !== "generation") return { "openinference.span.kind": "CHAIN" };
  const g = v.g;
  const a: Attrs = {
    "openinference.span.kind": "LLM",
    "llm.model_name": g.model,
    "llm.provider": g.provider.toLowerCase(),
    "llm.token_count.prompt": g.tokensPrompt,
    "llm.token_count.completion": g.tokensCompletion,
    "llm.token_count.total": g.tokensPrompt + g.tokensCompletion,
  };
  if (g.params !== null) a["llm.invocation_parameters"] = JSON.stringify(g.params);
  if (v.sessionId !== null) a["session.id"] = v.sessionId;
  if (v.userId !== null) a["user.id"] = v.userId;
  if (v.input !== null) {
    a["input.value"] = JSON.stringify(v.input);
    a["input.mime_type"] = "application/json";
    a["output.value"] = v.output ?? "";
    a["output.mime_type"] = "text/plain";
  }
  return a;
}
