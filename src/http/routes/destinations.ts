import type { FastifyInstance } from "fastify";
import type { AppContext } from "../context.js";

/** Routes of this resource (filled in by its own change). */
export async function destinationsRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
