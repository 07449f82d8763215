import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { DomainError } from "../domain/errors.js";
import { anthropicErrorBody } from "../gateway/surfaces/messages/messages-errors.js";
import { unavailableStore } from "../stores/store-errors.js";
import { envelope } from "./envelope.js";
import { formatValidationErrors } from "./validation.js";

/** Messages for framework failures, by Fastify error code. Never the framework's own text for 5xx. */
const FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: "body: must be a JSON object (the body is empty)",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "Content-Type: must be application/json",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "Content-Length: does not match the body",
  FST_ERR_CTP_BODY_TOO_LARGE: "body: too large",
  FST_ERR_CTP_INVALID_TYPE: "Content-Type: must be a string",
};

declare module "fastify" {
  interface FastifyContextConfig {
    /** The error body's shape on this route: Anthropic's (the Messages API), else the envelope. */
    errorShape?: "anthropic";
  }
}

/** An error body in the route's shape (FastifyContextConfig.errorShape). */
function errorBody(
  request: FastifyRequest,
  status: number,
  message: string,
  metadata?: Record<string, unknown> | null,
): unknown {
  if (request.routeOptions?.config?.errorShape === "anthropic") {
    return anthropicErrorBody(status, message, null, metadata ?? null);
  }
  return envelope(status, message, metadata ?? undefined);
}

/**
 * The only place where failures become HTTP responses. Every response uses the envelope; a 5xx
 * says nothing of internals and carries the request id that the log line also has.
 */
export function errorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (err instanceof DomainError) {
    // A 429 that knows when to come back says so (an upstream's Retry-After, passed on).
    const retryAfter = err.metadata?.retry_after_seconds;
    if (err.status === 429 && typeof retryAfter === "number") void reply.header("retry-after", retryAfter);
    void reply.status(err.status).send(errorBody(request, err.status, err.message, err.metadata));
    return;
  }
  if (err.validation) {
    const message = formatValidationErrors(err.validation as never, err.validationContext ?? "body");
    void reply.status(400).send(errorBody(request, 400, message));
    return;
  }
  const status = typeof err.statusCode === "number" ? err.statusCode : 500;
  if (status >= 400 && status < 500) {
    let message = (err.code && FRAMEWORK_MESSAGES[err.code]) ?? err.message;
    // JSON.parse messages echo the input: name the problem, not the payload.
    if (err instanceof SyntaxError || err.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
      message = "body: is not valid JSON";
    }
    const metadata = (err as { metadata?: Record<string, unknown> }).metadata ?? null;
    void reply.status(status).send(errorBody(request, status, message, metadata));
    return;
  }
  const store = unavailableStore(err);
  if (store) {
    // Not a bug: the store could not take the request now (src/stores/store-errors.ts).
    request.log.warn({ err, reqId: request.id }, `${store} unavailable`);
    const metadata = { request_id: String(request.id) };
    const message = `The ${store} is busy or unreachable; retry shortly`;
    void reply
      .status(503)
      .header("retry-after", 1)
      .send(errorBody(request, 503, message, metadata));
    return;
  }
  request.log.error({ err, reqId: request.id }, "unhandled error");
  void reply
    .status(500)
    .send(errorBody(request, 500, "Internal Server Error", { request_id: String(request.id) }));
}

/**
 * Failures the router meets before any route runs (Fastify's `frameworkErrors`): without this they
 * would answer with Fastify's own body instead of the envelope.
 */
export function frameworkErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (err.code === "FST_ERR_BAD_URL") {
    void reply.status(400).send(envelope(400, "path: is not a valid URL (malformed percent-encoding)"));
    return;
  }
  if (err.code === "FST_ERR_MAX_PARAM_LENGTH") {
    // An identifier longer than any the API issues names nothing: 404, like any malformed id.
    void reply.status(404).send(envelope(404, "path: a path segment is too long; no such resource"));
    return;
  }
  errorHandler(err, request, reply);
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  void reply
    .status(404)
    .send(envelope(404, `Route ${request.method} ${request.url.split("?")[0]} not found`));
}
