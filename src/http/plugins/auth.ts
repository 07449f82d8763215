import fp from "fastify-plugin";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { authenticate } from "../../domain/auth/authenticate.js";
import { DomainError, MANAGEMENT_ONLY } from "../../domain/errors.js";
import type { Principal } from "../../domain/auth/principal.js";
import type { AppContext } from "../context.js";

/** Who may call a route: a management key (the default), any valid key, or anyone. */
export type AuthMode = "management" | "any" | "none";

declare module "fastify" {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    principalOrNull: Principal | null;
  }
}

/** The authenticated caller of a route that requires auth. */
export function principal(request: FastifyRequest): Principal {
  if (!request.principalOrNull) throw new Error("route has no authenticated principal");
  return request.principalOrNull;
}

/**
 * Authentication runs first (onRequest), before the body is read: an unauthenticated caller costs
 * one indexed lookup and never reaches validation or rate-limit state.
 */
export const authPlugin = fp(async (app: FastifyInstance, ctx: AppContext) => {
  app.decorateRequest("principalOrNull", null);
  app.addHook("onRequest", async (request) => {
    const mode = request.routeOptions.config?.auth ?? "none";
    if (mode === "none") return;
    const p = await authenticate(ctx.store.db, ctx.clock, request.headers.authorization);
    if (mode === "management" && !p.isManagement) throw new DomainError("forbidden", MANAGEMENT_ONLY);
    request.principalOrNull = p;
  });
});
