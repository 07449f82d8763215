/**
 * The closed catalogue of domain errors. Services throw these; the HTTP error handler is the only
 * place that turns them (and every other failure) into the wire envelope.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  bad_gateway: 502,
  service_unavailable: 503,
  upstream_timeout: 524,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class DomainError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly metadata: Record<string, unknown> | null = null,
  ) {
    super(message);
    this.name = "DomainError";
    this.status = ERROR_STATUS[code];
  }
}

export const invalid = (message: string, metadata: Record<string, unknown> | null = null): DomainError =>
  new DomainError("invalid_request", message, metadata);

export const notFound = (what = "Resource"): DomainError => new DomainError("not_found", `${what} not found`);

export const conflict = (message: string): DomainError => new DomainError("conflict", message);

export const MANAGEMENT_ONLY = "Only management keys can perform this operation";
