import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { DomainError } from "../../domain/errors.js";
import type { Redacted } from "../../lib/redacted.js";
import type { GatehouseMetrics } from "../../metrics/gatehouse-metrics.js";

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/**
 * GET /metrics: the Prometheus text exposition of this instance (docs/operations.md "Metrics"),
 * outside /api/v1 like the health checks. Registered only when GATEHOUSE_METRICS_TOKEN is set,
 * and answered only to `Authorization: Bearer <that token>` (compared in constant time): the
 * figures are aggregates with no organization in them, but they describe the whole installation.
 */
export async function metricsRoutes(
  app: FastifyInstance,
  metrics: GatehouseMetrics,
  token: Redacted,
): Promise<void> {
  const expected = digest(token.reveal());
  app.get("/metrics", { config: { auth: "none" }, schema: { hide: true } }, async (request, reply) => {
    const header = request.headers.authorization;
    const given = typeof header === "string" && header.startsWith("Bearer ") ? header.slice(7).trim() : null;
    if (given === null || !timingSafeEqual(digest(given), expected)) {
      void reply.header("www-authenticate", 'Bearer realm="metrics"');
      throw new DomainError(
        "unauthorized",
        "GET /metrics needs Authorization: Bearer <GATEHOUSE_METRICS_TOKEN>",
      );
    }
    const { contentType, body } = await metrics.scrape();
    return reply.header("content-type", contentType).send(body);
  });
}

/**
 * GET /metrics while GATEHOUSE_METRICS_TOKEN is unset: a 404 in the error envelope saying how to
 * turn metrics on, rather than the dashboard's page with 200, which a scraper pointed here would
 * take for an exposition it cannot parse.
 */
export async function metricsOffRoute(app: FastifyInstance): Promise<void> {
  app.get("/metrics", { config: { auth: "none" }, schema: { hide: true } }, async () => {
    throw new DomainError("not_found", "Metrics are off: set GATEHOUSE_METRICS_TOKEN to serve GET /metrics");
  });
}
