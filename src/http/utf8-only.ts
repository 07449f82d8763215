import type { FastifyRequest } from "fastify";
import { DomainError } from "../domain/errors.js";

/**
 * JSON is UTF-8 (RFC 8259): a body declared in another charset would be decoded wrongly. The 415
 * for such a request, or null.
 */
export function charsetProblem(request: FastifyRequest): DomainError | null {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers["content-type"] ?? "")?.[1];
  if (charset === undefined || /^utf-?8$/i.test(charset)) return null;
  return new DomainError("unsupported_media_type", "Content-Type: charset must be utf-8");
}
