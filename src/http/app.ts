import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { AppContext } from "./context.js";
import { charsetProblem, utf8Problem, wholeBody } from "./utf8-only.js";
import { readWholeBody } from "./request-body.js";
import { errorHandler, frameworkErrorHandler, notFoundHandler } from "./error-handler.js";
import { deferredChildLogger } from "./request-logger.js";
import { authPlugin } from "./plugins/auth.js";
import { registerDashboard } from "./plugins/dashboard.js";
import { rateLimitPlugin } from "./plugins/rate-limit.js";
import { apiRoutes } from "./routes/index.js";
import { healthRoutes } from "./routes/health.js";
import { validatorCompiler } from "./validation.js";
import { createGateway, type Gateway } from "../gateway/gateway.js";
import { FeedbackActivity } from "../domain/generation-feedback/feedback-activity.js";
import { buildCatalog, closeCatalog } from "../gateway/catalog/build-catalog.js";
import { buildFileProviders } from "../gateway/catalog/load-providers-file.js";
import { GatehouseMetrics } from "../metrics/gatehouse-metrics.js";
import { broadcastBacklog, broadcastOutbox } from "../broadcast/operations/delivery-status.js";
import { metricsOffRoute, metricsRoutes } from "./routes/metrics.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The data plane (src/gateway/), for the composition root and tests. */
    gateway: Gateway;
  }
}

export const API_PREFIX = "/api/v1";
/** Management request bodies are small; larger ones are refused with 413. */
export const BODY_LIMIT = 1024 * 1024;

export interface BuildOptions {
  logger?: FastifyServerOptions["logger"];
}

/** Builds the HTTP app without listening: tests call inject(), main.ts calls listen(). */
export async function buildApp(given: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const ownGateway = !given.gateway;
  const metrics = given.metrics ?? (given.config.metricsToken ? new GatehouseMetrics() : null);
  const gateway =
    given.gateway ??
    createGateway({
      config: given.config.gateway,
      store: given.store,
      activity: given.activity,
      clock: given.clock,
      secretBox: given.secretBox,
      preparer: given.preparer,
      accepted: given.accepted,
      policy: given.policy,
      observer: metrics,
      // The built-in mock plus the models of GATEHOUSE_PROVIDERS_FILE (validated by config.ts).
      catalog: buildCatalog(
        given.config.gateway,
        given.config.providersFile ? buildFileProviders(given.config.providersFile) : undefined,
      ),
    });
  const feedbackActivity = given.feedbackActivity ?? new FeedbackActivity(given.store, given.activity);
  const ctx = { ...given, gateway, metrics, feedbackActivity };
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: BODY_LIMIT,
    trustProxy: ctx.config.trustProxy,
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    // One log line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is made when a request first logs through it (src/http/request-logger.ts).
    childLoggerFactory: deferredChildLogger,
    forceCloseConnections: "idle",
    frameworkErrors: frameworkErrorHandler,
  });
  gateway.onWarning((message) => app.log.warn(message));
  metrics?.watch({
    inFlight: () => gateway.inFlight.size,
    providersInFlight: () => gateway.limits.byProvider(),
    refusals: () => gateway.limits.refused,
    recordingQueued: () => gateway.recorder.queued,
    broadcastBacklog: async () => {
      const now = ctx.clock.now().getTime();
      return {
        byType: await broadcastBacklog(ctx.store.db, now, ctx.store.caps.lateralJoins),
        outbox: await broadcastOutbox(ctx.store.db, now),
      };
    },
    readFailed: (source, err) =>
      app.log.warn({ err, source }, "metrics: store read failed, its gauges are left out of this scrape"),
  });
  gateway.recorder.onFailure((err, generationId) => {
    metrics?.recordFailed();
    app.log.error({ err, generation_id: generationId }, "generation not recorded (its answer was sent)");
  });
  gateway.contentLog.onFailure((err, generationId) =>
    app.log.warn({ err, generation_id: generationId }, "generation content not logged (IO logging)"),
  );
  feedbackActivity.onFailure((err) =>
    app.log.warn({ err }, "generation feedback not written to the activity store yet (retried)"),
  );
  if (ownGateway) {
    // What an earlier process answered and did not commit, recorded before anything is served.
    const { recorded, refused } = await gateway
      .recover((err, generationId) =>
        app.log.error(
          { err, generation_id: generationId },
          "journaled generation refused at recovery (dropped)",
        ),
      )
      .catch(async (err: unknown) => {
        await gateway.close();
        await closeCatalog(gateway.catalog);
        throw err;
      });
    if (recorded + refused > 0) app.log.info({ recorded, refused }, "recording journal replayed");
    gateway.startRecordRetries(
      (err, generationId) =>
        app.log.error(
          { err, generation_id: generationId },
          "journaled generation refused on retry (dropped)",
        ),
      (err) =>
        app.log.warn({ err }, "generations answered and not recorded yet (kept in the journal, retried)"),
    );
  }
  if (gateway.answersBeforeCommit) {
    // Read-your-writes on this instance: a request other than a model request first waits for the
    // records of the answers already sent (free when none is pending; docs/gateway.md "Enforcement").
    // Health checks and the OpenAPI document (auth "none") never wait.
    // Callback hooks here and below, not async ones: a model request passes them on at once,
    // without a promise and a microtask each (docs/performance-history.md, 2026-11-29).
    app.addHook("onRequest", (request, _reply, done) => {
      const auth = request.routeOptions.config.auth;
      if (auth === "inference" || auth === "none") return done();
      gateway.recorder.settled().then(() => done(), done);
    });
  }
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler);
  let dashboardFallback: Awaited<ReturnType<typeof registerDashboard>> = null;
  app.setNotFoundHandler((request, reply) => {
    if (!dashboardFallback?.(request, reply)) notFoundHandler(request, reply);
  });
  // JSON only: text/plain bodies are refused with 415 like any other media type.
  app.removeContentTypeParser("text/plain");
  // JSON is UTF-8 (RFC 8259): a body declared in another charset would be decoded wrongly.
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  // Bytes first: a body that is not valid UTF-8, or that escapes a lone surrogate, is 400 naming
  // the field rather than decoded with replacement characters (which would merge distinct values).
  app.addContentTypeParser("application/json", (request, payload, done) => {
    readWholeBody(request.raw, payload, request.routeOptions.bodyLimit ?? BODY_LIMIT, (err, body) => {
      if (body === undefined) return done(err, undefined);
      const problem = charsetProblem(request) ?? utf8Problem(body, wholeBody);
      if (problem) done(problem, undefined);
      else void parseJson(request, body.toString("utf8"), done);
    });
  });
  app.decorate("gateway", gateway);
  if (ownGateway) {
    // The app built the catalog (above), so it closes the providers' pools too.
    app.addHook("onClose", async () => {
      await gateway.close();
      await closeCatalog(gateway.catalog);
    });
  }
  if (!given.feedbackActivity) app.addHook("onClose", () => feedbackActivity.stop());
  app.addHook("onSend", (request, reply, payload, done) => {
    void reply.header("x-request-id", request.id);
    done(null, payload);
  });
  // The request line holds only what the `req` serializer keeps (method, path without its query,
  // id), a status and a duration: nothing to redact by path, and path redaction (wildcards
  // included) cost ~7 µs a line, 3 % of a busy gateway. Same line as request.log would write; the
  // stream hook still scans it for credential-shaped text (src/http/logger.ts).
  const requestLog = app.log.child({}, { redact: { paths: [], censor: "[redacted]" } });
  app.addHook("onResponse", (request, reply, done) => {
    requestLog.info(
      {
        reqId: request.id,
        req: request,
        res: { statusCode: reply.statusCode },
        responseTime: reply.elapsedTime,
      },
      "request completed",
    );
    metrics?.request(
      request.method,
      request.routeOptions.url ?? null,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Gatehouse management API",
        version: "1.0.0",
        description:
          "Keys, workspaces, budgets, observability destinations and analytics of an AI model gateway.",
      },
      servers: [{ url: API_PREFIX }],
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(authPlugin, ctx);
  await app.register(rateLimitPlugin, ctx);
  await app.register(async (root) => healthRoutes(root, ctx));
  if (metrics && ctx.config.metricsToken) {
    const token = ctx.config.metricsToken;
    await app.register(async (root) => metricsRoutes(root, metrics, token));
  } else {
    await app.register(metricsOffRoute);
  }
  await app.register(async (api) => apiRoutes(api, ctx), { prefix: API_PREFIX });
  dashboardFallback = await registerDashboard(app, ctx.config.webDir);
  return app;
}
