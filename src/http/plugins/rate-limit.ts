import rateLimit from "@fastify/rate-limit";
import fp from "fastify-plugin";
import type { FastifyInstance } from "fastify";
import { DomainError } from "../../domain/errors.js";
import type { RateLimitConfig } from "../../config/config.js";
import type { AppContext } from "../context.js";

/** Per-route limit settings: `config: { rateLimit: routeLimit(ctx.config.rateLimit.management) }`. */
export const routeLimit = (c: RateLimitConfig) => ({ max: c.max, timeWindow: c.windowMs });

/** A rate-limit window in words: 60000 → "1 minute", 90000 → "90 seconds", 7200000 → "2 hours". */
export function describeWindow(ms: number): string {
  const unit = (n: number, name: string) => `${n} ${name}${n === 1 ? "" : "s"}`;
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return unit(ms / 3_600_000, "hour");
  if (ms >= 60_000 && ms % 60_000 === 0) return unit(ms / 60_000, "minute");
  if (ms >= 1_000 && ms % 1_000 === 0) return unit(ms / 1_000, "second");
  return unit(ms, "millisecond");
}

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
    errorResponseBuilder: (req, ctxRl) => {
      // The route's window, not the plugin's `after` (the time left until it resets).
      const limit = (req.routeOptions.config as { rateLimit?: { timeWindow?: unknown } }).rateLimit;
      const per = typeof limit?.timeWindow === "number" ? describeWindow(limit.timeWindow) : ctxRl.after;
      const err = new DomainError(
        "rate_limited",
        `Rate limit exceeded: ${ctxRl.max} requests per ${per}. Retry after ${Math.ceil(ctxRl.ttl / 1000)} s`,
      );
      return Object.assign(err, { statusCode: 429 });
    },
  });
});
