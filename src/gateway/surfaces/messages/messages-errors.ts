/**
 * Errors on the Anthropic Messages surface (docs/surfaces/messages.md "Errors"): the Anthropic
 * envelope `{type: "error", error: {type, message, error_type, metadata?}, request_id}` instead of
 * the chat surface's `{error: {code, message, metadata}}`. The Anthropic client picks its error
 * class by the HTTP status and reads `error.type`; `error_type` is the router's canonical error
 * type, the same for every API format.
 */

/** HTTP status → Anthropic's `error.type`. Other statuses: 4xx invalid_request_error, 5xx api_error. */
const ANTHROPIC_TYPE: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  408: "timeout_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  503: "overloaded_error",
  504: "timeout_error",
  524: "timeout_error",
  529: "overloaded_error",
};

/** HTTP status → the router's canonical error type (the SDK's ApiErrorType). */
const CANONICAL_TYPE: Readonly<Record<number, string>> = {
  400: "invalid_request",
  401: "authentication",
  402: "payment_required",
  403: "permission_denied",
  404: "not_found",
  408: "timeout",
  413: "payload_too_large",
  422: "unprocessable",
  429: "rate_limit_exceeded",
  500: "server",
  502: "provider_unavailable",
  503: "provider_unavailable",
  504: "timeout",
  524: "timeout",
  529: "provider_overloaded",
};

/** The canonical types a caller's `metadata.error_type` may name to override the status's. */
const CANONICAL = new Set([
  ...Object.values(CANONICAL_TYPE),
  "context_length_exceeded",
  "max_tokens_exceeded",
  "token_limit_exceeded",
  "string_too_long",
  "invalid_prompt",
  "precondition_failed",
  "content_policy_violation",
  "refusal",
  "unmapped",
]);

export function anthropicErrorType(status: number): string {
  return ANTHROPIC_TYPE[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/**
 * The Anthropic error body for an HTTP status. `requestId` is the generation id once a request was
 * routed, null before (the envelope requires the key). Gatehouse's own `metadata` (a refusal's
 * scope and limits, an upstream's status, a 429's retry_after_seconds) is kept under
 * `error.metadata`, which Anthropic's format does not have and its clients ignore. A
 * `metadata.error_type` that is one of the canonical types (a stream's "timeout",
 * "provider_unavailable", "server") is the body's `error_type`; Gatehouse's other error types
 * ("provider", "byok_key_unreadable") stay in the metadata and the status decides.
 */
export function anthropicErrorBody(
  status: number,
  message: string,
  requestId: string | null,
  metadata?: Record<string, unknown> | null,
): Record<string, unknown> {
  const named = metadata?.error_type;
  const errorType =
    typeof named === "string" && CANONICAL.has(named)
      ? named
      : (CANONICAL_TYPE[status] ?? (status >= 500 ? "server" : "invalid_request"));
  return {
    type: "error",
    error: {
      type: anthropicErrorType(status),
      message,
      error_type: errorType,
      ...(metadata ? { metadata } : {}),
    },
    request_id: requestId,
  };
}
