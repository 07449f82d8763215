import rateLimit from "@fastify/rate-limit";
import fp from "fastify-plugin";
import type { FastifyInstance } from "fastify";
import { DomainError } from "../../domain/errors.js";
import type { RateLimitConfig } from "../../config/config.js";
import type { AppContext } from "../context.js";

/** Per-route limit settings: `config: { rateLimit: routeLimit(ctx.config.rateLimit.management) }`. */
export const routeLimit = (c: RateLimitConfig) => ({ max: c.max, timeWindow: c.windowMs });

/**
 * Rate limits count per authenticated key (per IP for anonymous routes). With REDIS_URL the
 * counters live in Redis, so every instance behind the load balancer enforces one limit.
 * The check runs after authentication and before validation.
 */
export const rateLimitPlugin = fp(async (app: FastifyInstance, ctx: AppContext) => {
  await app.register(rateLimit, {
    global: false,
    hook: "preValidation",
    ...(ctx.redis ? { redis: ctx.redis, nameSpace: "gatehouse:rl:" } : {}),
    keyGenerator: (req) => req.principalOrNull?.keyHash ?? req.ip,
    // Redis trouble must not take the API down: serve the request unlimited and let /readyz say so.
    skipOnError: true,
    errorResponseBuilder: (_req, ctxRl) => {
      const err = new DomainError(
        "rate_limited",
        `Rate limit exceeded: ${ctxRl.max} requests per ${ctxRl.after}. Retry after ${Math.ceil(ctxRl.ttl / 1000)} s`,
      );
      return Object.assign(err, { statusCode: 429 });
    },
  });
});
