import fp from "fastify-plugin";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { authenticate } from "../../domain/auth/authenticate.js";
import { DomainError, MANAGEMENT_ONLY } from "../../domain/errors.js";
import type { Principal } from "../../domain/auth/principal.js";
import type { AppContext } from "../context.js";
import { authenticateInference, type InferenceKey } from "../../gateway/policy.js";
import type { Gateway } from "../../gateway/gateway.js";

/**
 * Who may call a route: a management key (the default), any valid key, anyone, or an ordinary
 * key making an inference request (disabled 403, management key 403: src/gateway/policy.ts).
 */
export type AuthMode = "management" | "any" | "none" | "inference";

declare module "fastify" {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    principalOrNull: Principal | null;
    inferenceKey: InferenceKey | null;
    /** process.hrtime.bigint() when the request arrived (the gateway's overhead header). */
    arrivedNs: bigint;
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
export const authPlugin = fp(async (app: FastifyInstance, ctx: AppContext & { gateway: Gateway }) => {
  app.decorateRequest("principalOrNull", null);
  app.decorateRequest("inferenceKey", null);
  app.decorateRequest("arrivedNs", 0n);
  app.addHook("onRequest", async (request) => {
    const mode = request.routeOptions.config?.auth ?? "none";
    if (mode === "none") return;
    if (mode === "inference") {
      request.arrivedNs = process.hrtime.bigint();
      const key = await authenticateInference(ctx.gateway.policy, ctx.clock, request.headers.authorization);
      request.inferenceKey = key;
      request.principalOrNull = {
        keyHash: key.hash,
        keyId: key.id,
        organizationId: key.organizationId,
        workspaceId: key.workspaceId,
        isManagement: false,
      };
      return;
    }
    const p = await authenticate(ctx.store.db, ctx.clock, request.headers.authorization);
    if (mode === "management" && !p.isManagement) throw new DomainError("forbidden", MANAGEMENT_ONLY);
    request.principalOrNull = p;
  });
});
