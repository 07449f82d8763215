import type { FastifyInstance } from "fastify";
import { createDestination } from "../../domain/destinations/create-destination.js";
import { deleteDestination } from "../../broadcast/operations/delete-destination.js";
import { getDestination } from "../../domain/destinations/get-destination.js";
import { listDestinations } from "../../domain/destinations/list-destinations.js";
import { updateDestination } from "../../domain/destinations/update-destination.js";
import { outboundPolicy } from "../../lib/outbound-policy.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { DeletedResponse } from "../schemas/common.js";
import {
  CreateDestinationBody,
  DestinationListResponse,
  DestinationParams,
  DestinationResponse,
  ListDestinationsQuery,
  UpdateDestinationBody,
  type CreateDestinationBodyT,
  type DestinationParamsT,
  type ListDestinationsQueryT,
  type UpdateDestinationBodyT,
} from "../schemas/destinations.js";

const TAGS = ["Observability"];

/** Observability destinations: create, list, get, update, delete (management keys only). */
export async function destinationsRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const config = { auth: "management" as const, rateLimit: routeLimit(ctx.config.rateLimit.management) };
  const { store, clock, secretBox } = ctx;
  const addresses = outboundPolicy(ctx.config.broadcast);

  app.post<{ Body: CreateDestinationBodyT }>(
    "/observability/destinations",
    {
      config,
      schema: {
        operationId: "createObservabilityDestination",
        tags: TAGS,
        body: CreateDestinationBody,
        response: { 201: DestinationResponse },
      },
    },
    async (request, reply) => {
      const { organizationId } = principal(request);
      const data = await createDestination(store, clock, secretBox, organizationId, request.body, addresses);
      return reply.status(201).send({ data });
    },
  );

  app.get<{ Querystring: ListDestinationsQueryT }>(
    "/observability/destinations",
    {
      config,
      schema: {
        operationId: "listObservabilityDestinations",
        tags: TAGS,
        querystring: ListDestinationsQuery,
        response: { 200: DestinationListResponse },
      },
    },
    async (request) => listDestinations(store, secretBox, principal(request).organizationId, request.query),
  );

  app.get<{ Params: DestinationParamsT }>(
    "/observability/destinations/:id",
    {
      config,
      schema: {
        operationId: "getObservabilityDestination",
        tags: TAGS,
        params: DestinationParams,
        response: { 200: DestinationResponse },
      },
    },
    async (request) => ({
      data: await getDestination(store.db, secretBox, principal(request).organizationId, request.params.id),
    }),
  );

  app.patch<{ Params: DestinationParamsT; Body: UpdateDestinationBodyT }>(
    "/observability/destinations/:id",
    {
      config,
      schema: {
        operationId: "updateObservabilityDestination",
        tags: TAGS,
        params: DestinationParams,
        body: UpdateDestinationBody,
        response: { 200: DestinationResponse },
      },
    },
    async (request) => ({
      data: await updateDestination(
        store,
        clock,
        secretBox,
        principal(request).organizationId,
        request.params.id,
        request.body,
        addresses,
      ),
    }),
  );

  app.delete<{ Params: DestinationParamsT }>(
    "/observability/destinations/:id",
    {
      config,
      schema: {
        operationId: "deleteObservabilityDestination",
        tags: TAGS,
        params: DestinationParams,
        response: { 200: DeletedResponse },
      },
    },
    async (request) => {
      await deleteDestination(store, clock, principal(request).organizationId, request.params.id);
      return { deleted: true as const };
    },
  );
}
