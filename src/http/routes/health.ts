import type { FastifyInstance } from "fastify";
import { broadcastDrops, type BroadcastDrops } from "../../broadcast/operations/delivery-status.js";
import { DomainError } from "../../domain/errors.js";
import type { AppContext } from "../context.js";
import { within } from "../../lib/within.js";

/**
 * Liveness (the process answers) and readiness (every store answers). Readiness also reports
 * Broadcast's queue-cap drops (docs/broadcast.md "Caps and pruning") as `broadcast`: drops do
 * not make the server unready, but an operator polling /readyz sees them. Aggregates only, as
 * /readyz needs no authentication.
 */
/**
 * How long /readyz waits for each store: a store that stalls (a PostgreSQL connection stuck on a
 * lost network) makes the instance unready at once instead of holding every probe until the
 * probe's own timeout, which would read as the whole instance hanging.
 */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

export async function healthRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get("/healthz", { config: { auth: "none" }, schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/readyz", { config: { auth: "none" }, schema: { hide: true } }, async (request, reply) => {
    const checks: Record<string, string> = {};
    const check = async (name: string, fn: () => Promise<unknown>) => {
      try {
        await within(fn(), READINESS_CHECK_TIMEOUT_MS);
        checks[name] = "ok";
      } catch (err) {
        request.log.warn({ err, store: name }, "readiness check failed");
        checks[name] = "unreachable";
      }
    };
    // The stores are asked together: the answer takes as long as the slowest, at most the timeout.
    const redis = ctx.redis;
    await Promise.all([
      check("record_store", () => ctx.store.ping()),
      check("activity_store", () => ctx.activity.ping()),
      ...(redis ? [check("redis", () => redis.ping())] : []),
    ]);
    let broadcast: BroadcastDrops | null = null;
    if (checks.record_store === "ok") {
      try {
        broadcast = await within(broadcastDrops(ctx.store.db), READINESS_CHECK_TIMEOUT_MS);
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
