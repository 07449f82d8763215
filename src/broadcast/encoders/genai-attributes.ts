import type { GenerationView, SpanView } from "./generation-view.js";

/** An OTLP attribute value (the subset Gatehouse emits). */
export type AttrValue = string | number | boolean | string[];
export type Attrs = Record<string, AttrValue>;

/** Request parameters with a GenAI semconv name (`gen_ai.request.<name>`). */
const REQUEST_PARAMS: Record<string, string> = {
  temperature: "temperature",
  max_tokens: "max_tokens",
  max_completion_tokens: "max_tokens",
  top_p: "top_p",
  top_k: "top_k",
  frequency_penalty: "frequency_penalty",
  presence_penalty: "presence_penalty",
  seed: "seed",
};

export interface AttributeOptions {
  /** Prefix of custom metadata keys: `trace.metadata.` (hosted original) or `metadata.` (Arize). */
  metadataPrefix: string;
}

/** The provider as a `gen_ai.provider.name` value: lower-case slug ("OpenAI" → "openai"). */
const providerSlug = (provider: string): string => provider.toLowerCase().replace(/\s+/g, "-");

/** OpenTelemetry GenAI output message: parts JSON per the semconv schema. */
const outputMessages = (v: GenerationView): string =>
  JSON.stringify([
    {
      role: "assistant",
      parts: [{ type: "text", content: v.output ?? "" }],
      finish_reason: v.finishReason ?? "stop",
    },
  ]);

/** OpenTelemetry GenAI input messages: string content becomes one text part. */
const inputMessages = (v: GenerationView): string =>
  JSON.stringify(
    (v.input ?? []).map((m) => ({
      role: m.role,
      parts:
        typeof m.content === "string"
          ? [{ type: "text", content: m.content }]
          : Array.isArray(m.content)
            ? (m.content as { text?: unknown }[]).map((p) => ({
                type: "text",
                content: typeof p.text === "string" ? p.text : "",
              }))
            : [],
    })),
  );

/**
 * The generation span's attributes: current OpenTelemetry GenAI semconv names plus the hosted
 * original's compatibility keys (docs/broadcast.md "OTLP types"). Where the two disagree on a
 * key's type, semconv wins (`gen_ai.response.finish_reasons` is a string array) and the hosted
 * original's singular `gen_ai.response.finish_reason` carries the string.
 */
export function generationAttributes(v: GenerationView, opts: AttributeOptions): Attrs {
  const g = v.g;
  const provider = providerSlug(g.provider);
  const a: Attrs = {
    // OpenTelemetry's operation names: embeddings for the embeddings API, chat for the others.
    "gen_ai.operation.name": g.api === "embeddings" ? "embeddings" : "chat",
    "gen_ai.provider.name": provider,
    "gen_ai.system": provider,
    "gen_ai.request.model": g.model,
    "gen_ai.response.model": g.attempts.at(-1)?.model ?? g.model,
    "gen_ai.response.id": g.id,
    "gen_ai.request.stream": g.streamed,
    "gen_ai.usage.input_tokens": g.tokensPrompt,
    "gen_ai.usage.output_tokens": g.tokensCompletion,
    "gen_ai.usage.total_tokens": g.tokensPrompt + g.tokensCompletion,
    "gen_ai.usage.cache_read.input_tokens": g.tokensCached,
    "gen_ai.usage.reasoning.output_tokens": g.tokensReasoning,
    "gen_ai.usage.input_tokens.cached": g.tokensCached,
    "gen_ai.usage.output_tokens.reasoning": g.tokensReasoning,
    "gen_ai.usage.prompt_tokens": g.tokensPrompt,
    "gen_ai.usage.completion_tokens": g.tokensCompletion,
    "span.type": "generation",
    "span.level": v.generation.error ? "ERROR" : "DEFAULT",
    "trace.name": v.traceName,
  };
  if (v.finishReason !== null) {
    a["gen_ai.response.finish_reasons"] = [v.finishReason];
    a["gen_ai.response.finish_reason"] = v.finishReason;
  }
  if (g.streamed) a["gen_ai.response.time_to_first_chunk"] = g.latencyMs / 1000;
  // Which of Gatehouse's API surfaces served it (docs/gateway.md "API surfaces").
  if (g.api) a["gatehouse.api"] = g.api;
  for (const [name, value] of Object.entries(g.params ?? {})) {
    const key = REQUEST_PARAMS[name];
    if (key !== undefined && typeof value === "number") a[`gen_ai.request.${key}`] = value;
  }
  if (g.cost) {
    if (g.cost.promptUsd !== null) a["gen_ai.usage.input_cost"] = g.cost.promptUsd;
    if (g.cost.completionUsd !== null) a["gen_ai.usage.output_cost"] = g.cost.completionUsd;
    a["gen_ai.usage.total_cost"] = g.cost.totalUsd;
    a["gen_ai.usage.cost"] = g.cost.totalUsd;
  }
  if (v.sessionId !== null) {
    a["session.id"] = v.sessionId;
    a["gen_ai.conversation.id"] = v.sessionId;
  }
  if (v.userId !== null) a["user.id"] = v.userId;
  if (v.input !== null) {
    const input = JSON.stringify(v.input);
    const output = JSON.stringify(v.output ?? "");
    a["gen_ai.input.messages"] = inputMessages(v);
    a["gen_ai.output.messages"] = outputMessages(v);
    a["gen_ai.prompt"] = input;
    a["gen_ai.completion"] = output;
    a["trace.input"] = input;
    a["trace.output"] = output;
    a["span.input"] = input;
    a["span.output"] = output;
  }
  for (const [key, value] of Object.entries(v.metadata)) a[`${opts.metadataPrefix}${key}`] = value;
  const or = `${opts.metadataPrefix}openrouter.`;
  a[`${or}provider_name`] = g.provider;
  a[`${or}provider_slug`] = provider;
  if (v.finishReason !== null) a[`${or}finish_reason`] = v.finishReason;
  a[`${or}first_token_ms`] = g.latencyMs;
  a[`${or}is_byok`] = g.isByok;
  a[`${or}streamed`] = g.streamed;
  a[`${or}cancelled`] = g.cancelled;
  if (g.identity) {
    if (g.identity.apiKeyName !== null) a[`${or}api_key_name`] = g.identity.apiKeyName;
    if (g.identity.userId !== null) a[`${or}creator_user_id`] = g.identity.userId;
    if (g.identity.externalUser !== null) a[`${or}user_id`] = g.identity.externalUser;
  }
  if (g.requestContext) {
    if (g.requestContext.appTitle !== null) a[`${or}app_title`] = g.requestContext.appTitle;
    if (g.requestContext.referer !== null) a[`${or}http_referer`] = g.requestContext.referer;
  }
  if (g.cost && g.cost.byokUsd > 0) a[`${or}byok_cost`] = g.cost.byokUsd;
  return a;
}

/** A provider attempt's child span (hosted original: metadata attempt_index, status_code, is_byok). */
export function attemptAttributes(v: GenerationView, span: SpanView, opts: AttributeOptions): Attrs {
  const at = span.attempt!;
  const a: Attrs = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": providerSlug(at.provider),
    "gen_ai.request.model": at.model,
    "span.type": "span",
    "span.level": span.error ? "ERROR" : "DEFAULT",
    [`${opts.metadataPrefix}attempt_index`]: at.index,
    [`${opts.metadataPrefix}is_byok`]: v.g.isByok,
  };
  if (at.status !== null) {
    a["http.response.status_code"] = at.status;
    a[`${opts.metadataPrefix}status_code`] = at.status;
  }
  if (span.error) a["error.type"] = at.status === null ? "no_response" : String(at.status);
  return a;
}

/** The wrapper span (`trace.span_name`): a plain span around the generation. */
export const wrapperAttributes = (v: GenerationView): Attrs => ({
  "span.type": "span",
  "span.level": "DEFAULT",
  "trace.name": v.traceName,
});
