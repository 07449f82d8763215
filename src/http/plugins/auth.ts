import fp from "fastify-plugin";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { authenticate } from "../../domain/auth/authenticate.js";
import { DomainError, MANAGEMENT_ONLY } from "../../domain/errors.js";
import type { Principal } from "../../domain/auth/principal.js";
import type { AppContext } from "../context.js";
import { authenticateInferenceNow } from "../../gateway/inference-auth.js";
import type { KeyPolicy } from "../../domain/policy/policy.js";
import type { Gateway } from "../../gateway/gateway.js";

/**
 * Who may call a route: a management key, any valid key, anyone, or an ordinary key making an
 * inference request (disabled 403, management key 403: src/gateway/inference-auth.ts). A route that says
 * nothing requires a management key (fail closed); public routes opt out with `auth: "none"`.
 */
export type AuthMode = "management" | "any" | "none" | "inference";

declare module "fastify" {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    principalOrNull: Principal | null;
    inferenceKey: KeyPolicy | null;
    /** process.hrtime.bigint() when the request arrived (the gateway's overhead header). */
    arrivedNs: bigint;
  }
  interface FastifyInstance {
    /** Every route registered after the auth plugin, with the auth mode it gets (for audits and tests). */
    authRoutes: readonly RouteAuth[];
  }
}

export interface RouteAuth {
  method: string;
  url: string;
  auth: AuthMode;
  /** Whether the route said so itself (false: the management default applies). */
  declared: boolean;
}

/** The authenticated caller of a route that requires auth. */
export function principal(request: FastifyRequest): Principal {
  if (!request.principalOrNull) throw new Error("route has no authenticated principal");
  return request.principalOrNull;
}

/**
 * Authentication runs first (onRequest), before the body is read: an unauthenticated caller costs
 * a policy-cache lookup (a bounded record-store query for an unknown key) and never reaches
 * validation or rate-limit state. Unrouted requests (404) need no key.
 */
export const authPlugin = fp(async (app: FastifyInstance, ctx: AppContext & { gateway: Gateway }) => {
  app.decorateRequest("principalOrNull", null);
  const routes: RouteAuth[] = [];
  app.decorate("authRoutes", routes);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      // Read when asked, not now: a plugin scope's own onRoute hook (the dashboard's static files)
      // declares its routes' mode after this root hook has run.
      routes.push({
        method,
        url: route.url,
        get auth(): AuthMode {
          return route.config?.auth ?? "management";
        },
        get declared(): boolean {
          return route.config?.auth !== undefined;
        },
      });
    }
  });
  app.decorateRequest("inferenceKey", null);
  app.decorateRequest("arrivedNs", 0n);
  // A callback hook: a model request whose key the policy cache knows is authenticated without
  // a promise (authenticateInferenceNow), and goes on at once.
  app.addHook("onRequest", (request, _reply, done) => {
    if (request.is404) return done();
    const mode = request.routeOptions.config?.auth ?? "management";
    if (mode === "none") return done();
    if (mode === "inference") {
      request.arrivedNs = process.hrtime.bigint();
      const apiKey = request.headers["x-api-key"];
      let key: KeyPolicy | Promise<KeyPolicy>;
      try {
        key = authenticateInferenceNow(
          ctx.gateway.policy,
          ctx.clock,
          request.headers.authorization,
          typeof apiKey === "string" ? apiKey : undefined,
        );
      } catch (err) {
        return done(err as Error);
      }
      if (!(key instanceof Promise)) {
        admitInference(request, key);
        return done();
      }
      key.then((k) => {
        admitInference(request, k);
        done();
      }, done);
      return;
    }
    authenticate(ctx.policy, ctx.clock, request.headers.authorization).then((p) => {
      if (mode === "management" && !p.isManagement)
        return done(new DomainError("forbidden", MANAGEMENT_ONLY));
      request.principalOrNull = p;
      done();
    }, done);
  });
});

/** Sets the request's inference key and principal (an ordinary key: never a management one). */
function admitInference(request: FastifyRequest, key: KeyPolicy): void {
  request.inferenceKey = key;
  request.principalOrNull = {
    keyHash: key.hash,
    keyId: key.id,
    organizationId: key.organizationId,
    workspaceId: key.workspaceId,
    isManagement: false,
  };
}
