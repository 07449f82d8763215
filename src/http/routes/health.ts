import type { FastifyInstance } from "fastify";
import { broadcastDrops, type BroadcastDrops } from "../../broadcast/operations/delivery-status.js";
import { DomainError } from "../../domain/errors.js";
import type { AppContext } from "../context.js";

/**
 * Liveness (the process answers) and readiness (every store answers). Readiness also reports
 * Broadcast's queue-cap drops (docs/broadcast.md "Caps and pruning") as `broadcast`: drops do
 * not make the server unready, but an operator polling /readyz sees them. Aggregates only, as
 * /readyz needs no authentication.
 */
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
    let broadcast: BroadcastDrops | null = null;
    if (checks.record_store === "ok") {
      try {
        broadcast = await broadcastDrops(ctx.store.db);
      } catch (err) {
        request.log.warn({ err }, "readiness: broadcast drops unreadable");
      }
    }
    const ok = Object.values(checks).every((v) => v === "ok");
    if (!ok) {
      const err = new DomainError("internal", "Not ready", { checks });
      return reply
        .status(503)
        .send({ error: { code: 503, message: err.message, metadata: { checks, broadcast } } });
    }
    return { status: "ready", checks, broadcast };
  });
}
