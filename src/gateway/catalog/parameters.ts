import type { ProviderKind } from "./catalog.js";

/**
 * Request parameters an endpoint honours: what /models lists as `supported_parameters` and what
 * `provider.require_parameters` routes by. Names are the hosted original's vocabulary (its
 * /models lists the same names), in one canonical order.
 */
export const PARAMETERS = [
  "max_tokens",
  "temperature",
  "top_p",
  "top_k",
  "min_p",
  "top_a",
  "stop",
  "frequency_penalty",
  "presence_penalty",
  "repetition_penalty",
  "seed",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "response_format",
  "structured_outputs",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "reasoning",
  "include_reasoning",
  "verbosity",
  "web_search_options",
] as const;

export type Parameter = (typeof PARAMETERS)[number];

const KNOWN = new Set<string>(PARAMETERS);
export const isParameter = (name: string): name is Parameter => KNOWN.has(name);

/**
 * What each adapter honours when the providers file does not say (a model's
 * `supported_parameters` there overrides it): an OpenAI-compatible server is assumed to take
 * OpenAI's chat parameters, since the adapter forwards the body as it is; Anthropic's adapter
 * translates exactly these (anthropic-request.ts); the mock only cuts its answer at max_tokens.
 */
export const DEFAULT_PARAMETERS: Record<ProviderKind, readonly Parameter[]> = {
  "openai-compatible": [
    "max_tokens",
    "temperature",
    "top_p",
    "stop",
    "frequency_penalty",
    "presence_penalty",
    "seed",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "response_format",
    "structured_outputs",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
  ],
  anthropic: [
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
  ],
  mock: ["max_tokens"],
};

/** `names` in the canonical order, each once. */
export function canonical(names: Iterable<string>): Parameter[] {
  const set = new Set(names);
  return PARAMETERS.filter((p) => set.has(p));
}

/** A body field that asks for nothing: absent, null, or (for lists) empty. */
const unset = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0);

/**
 * A field whose value asks nothing of the endpoint: `logprobs: false`; `include_reasoning: false`
 * and a `reasoning` that only hides, or turns off, the reasoning (`exclude`, `enabled: false`,
 * effort `none`): Gatehouse leaves reasoning out of the answer itself (docs/gateway.md).
 */
function asksNothing(k: string, v: unknown): boolean {
  if (unset(v)) return true;
  if (k === "logprobs" || k === "include_reasoning") return v === false;
  if (k !== "reasoning" || typeof v !== "object" || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  if (r.enabled === false || r.effort === "none") return true;
  return Object.entries(r).every(([f, x]) => f === "exclude" || x === undefined || x === null);
}

/**
 * The parameters a request uses: each vocabulary name present in the body that asks something of
 * the endpoint (`asksNothing`), with the
 * hosted original's aliases: `max_completion_tokens` is `max_tokens`, and a `response_format` of
 * type `json_schema` also needs `structured_outputs`.
 */
export function requestParameters(body: Record<string, unknown>): Parameter[] {
  const used = new Set<string>();
  for (const [k, v] of Object.entries(body)) {
    if (asksNothing(k, v)) continue;
    if (k === "max_completion_tokens") used.add("max_tokens");
    else if (KNOWN.has(k)) used.add(k);
  }
  const format = body.response_format;
  if (typeof format === "object" && format !== null && (format as { type?: unknown }).type === "json_schema")
    used.add("structured_outputs");
  return canonical(used);
}

/** Which of `wanted` an endpoint's `supported` parameters lack. */
export const lacking = (supported: readonly string[], wanted: readonly string[]): string[] =>
  wanted.filter((p) => !supported.includes(p));

/** Whether an endpoint's `supported` parameters include every one of `wanted`. */
export const supportsAll = (supported: readonly string[], wanted: readonly string[]): boolean =>
  wanted.every((p) => supported.includes(p));
