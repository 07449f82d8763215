import type { FastifyInstance } from "fastify";
import { defaultEncoderLookup } from "../../broadcast/encoder-lookup.js";
import { deliveryStatus } from "../../broadcast/operations/delivery-status.js";
import { replayDestination } from "../../broadcast/operations/replay.js";
import { testDestination } from "../../broadcast/operations/test-destination.js";
import { outboundPolicy } from "../../lib/outbound-policy.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import {
  DeliveryStatusResponse,
  ReplayBody,
  ReplayResultResponse,
  TestResultResponse,
  type ReplayBodyT,
} from "../schemas/broadcast.js";
import { DestinationParams, type DestinationParamsT } from "../schemas/destinations.js";

const TAGS = ["Observability"];

/** Broadcast operations on a destination: test connection, delivery status, replay. */
export async function broadcastRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const config = { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  const { store, clock, secretBox } = ctx;
  const encoderFor = ctx.encoderFor ?? defaultEncoderLookup;

  app.post<{ Params: DestinationParamsT }>(
    "/observability/destinations/:id/test",
    {
      config,
      schema: {
        operationId: "testObservabilityDestination",
        summary: "Send one test event to the destination now and report the receiver's answer",
        tags: TAGS,
        params: DestinationParams,
        response: { 200: TestResultResponse },
      },
    },
    async (request) => ({
      data: await testDestination(
        store.db,
        secretBox,
        encoderFor,
        {
          timeoutMs: ctx.config.broadcast.attemptTimeoutMs,
          addresses: outboundPolicy(ctx.config.broadcast),
        },
        principal(request).organizationId,
        request.params.id,
      ),
    }),
  );

  app.get<{ Params: DestinationParamsT }>(
    "/observability/destinations/:id/deliveries",
    {
      config,
      schema: {
        operationId: "getObservabilityDestinationDeliveries",
        summary: "Delivery state: counts by state, oldest pending, last success and error, dead letters",
        tags: TAGS,
        params: DestinationParams,
        response: { 200: DeliveryStatusResponse },
      },
    },
    async (request) => ({
      data: await deliveryStatus(
        store.db,
        principal(request).organizationId,
        request.params.id,
        clock.now().getTime(),
        (id) => ctx.broadcaster?.breakerState(id) ?? "closed",
      ),
    }),
  );

  app.post<{ Params: DestinationParamsT; Body: ReplayBodyT }>(
    "/observability/destinations/:id/replay",
    {
      config,
      schema: {
        operationId: "replayObservabilityDestination",
        summary: "Re-offer the generations of a time range to the destination (metadata only)",
        tags: TAGS,
        params: DestinationParams,
        body: ReplayBody,
        response: { 202: ReplayResultResponse },
      },
    },
    async (request, reply) => {
      const data = await replayDestination(
        {
          store,
          activity: ctx.activity,
          nowMs: clock.now().getTime(),
          queryTimeoutMs: ctx.config.analytics.queryTimeoutMs,
          outboxSignal: ctx.outboxSignal,
        },
        principal(request).organizationId,
        request.params.id,
        request.body.from,
        request.body.to,
      );
      return reply.status(202).send({ data });
    },
  );
}
