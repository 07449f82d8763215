import type { FastifyInstance } from "fastify";
import { DomainError } from "../../domain/errors.js";
import type { AppContext } from "../context.js";

/** Liveness (the process answers) and readiness (every store answers). */
export async function healthRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get("/healthz", { config: { auth: "none" }, schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/readyz", { config: { auth: "none" }, schema: { hide: true } }, async (request, reply) => {
    const checks: Record<string, string> = {};
    const check = async (name: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
        checks[name] = "ok";
      } catch (err) {
        request.log.warn({ err, store: name }, "readiness check failed");
        checks[name] = "unreachable";
      }
    };
    await check("record_store", () => ctx.store.ping());
    await check("activity_store", () => ctx.activity.ping());
    if (ctx.redis) {
      const redis = ctx.redis;
      await check("redis", () => redis.ping());
    }
    const ok = Object.values(checks).every((v) => v === "ok");
    if (!ok) {
      const err = new DomainError("internal", "Not ready", { checks });
      return reply.status(503).send({ error: { code: 503, message: err.message, metadata: { checks } } });
    }
    return { status: "ready", checks };
  });
}
