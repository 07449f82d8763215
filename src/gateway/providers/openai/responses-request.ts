import type { UpstreamCall } from "../provider.js";
import { isObject, type Json } from "./openai-json.js";

/**
 * What a native Responses request (UpstreamCall.native of kind `openai-responses`) keeps of the
 * client's body: everything but the router's own fields (fallbacks, provider preferences,
 * attribution, plugins), which OpenAI's Responses API does not know and refuses.
 */
const ROUTER_FIELDS = new Set([
  "models",
  "fallbacks",
  "provider",
  "plugins",
  "session_id",
  "trace",
  "safeguards",
  "stop_server_tools_when",
  "debug",
  "route",
  "transforms",
  "usage",
  "cache_control",
  "modalities",
]);

/** The router's own `reasoning` fields: OpenAI takes only `effort` and `summary` (and `generate_summary`). */
const ROUTER_REASONING_FIELDS = new Set(["max_tokens", "enabled", "exclude", "mode"]);

/**
 * The body POSTed to {base}/responses: the client's, router fields removed, `model` the
 * endpoint's upstream model, `max_output_tokens` the completion cap the hold reserved (`body`'s,
 * capMaxTokens: never more than was reserved), `stream` as asked, `store: false` (Gatehouse keeps
 * nothing, and asks the provider to keep nothing either). `stream_options` goes only with a stream.
 */
export function nativeResponsesBody(call: UpstreamCall, native: Json, stream: boolean): Json {
  const req: Json = {};
  for (const [k, v] of Object.entries(native)) if (!ROUTER_FIELDS.has(k)) req[k] = v;
  if (isObject(req.reasoning)) {
    const reasoning: Json = {};
    for (const [k, v] of Object.entries(req.reasoning)) if (!ROUTER_REASONING_FIELDS.has(k)) reasoning[k] = v;
    // The router's highest effort, as the highest OpenAI knows.
    if (reasoning.effort === "max") reasoning.effort = "xhigh";
    req.reasoning = reasoning;
  }
  req.model = call.upstreamModel;
  const cap = call.body.max_tokens ?? call.body.max_completion_tokens ?? call.maxCompletionTokens;
  if (typeof cap === "number") req.max_output_tokens = cap;
  req.stream = stream;
  req.store = false;
  if (!stream) delete req.stream_options;
  return req;
}
