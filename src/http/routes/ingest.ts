import type { FastifyInstance, FastifyRequest } from "fastify";
import { DomainError } from "../../domain/errors.js";
import { ingestGenerations, recordsOf } from "../../domain/ingest/ingest-generations.js";
import { MAX_RECORDS, UnparsableLine } from "../../domain/ingest/validate-generations.js";
import type { AppContext } from "../context.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { IngestBody, IngestResponse } from "../schemas/ingest.js";
import { validatorCompiler } from "../validation.js";

/** Ingest bodies carry up to 10,000 records: a larger limit than management requests. */
export const INGEST_BODY_LIMIT = 32 * 1024 * 1024;

const MEDIA_TYPES = "Content-Type: must be application/json or application/x-ndjson";

/** One record per line; blank lines are skipped; a line that is not JSON is reported as its record's problem. */
export function parseNdjson(text: string): { generations: unknown[] } {
  const generations: unknown[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    if (generations.length === MAX_RECORDS) {
      throw new DomainError("payload_too_large", `generations: at most ${MAX_RECORDS} records per request`);
    }
    try {
      generations.push(JSON.parse(line));
    } catch {
      generations.push(new UnparsableLine(i + 1));
    }
  }
  return { generations };
}

/** POST /activity/generations: JSON or NDJSON, all or nothing, idempotent by id (spec/activity.md). */
export async function ingestRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  await root.register(async (app) => {
    app.addContentTypeParser(
      ["application/x-ndjson", "application/jsonl", "application/jsonlines"],
      { parseAs: "string", bodyLimit: INGEST_BODY_LIMIT },
      (_request: FastifyRequest, body: string | Buffer, done) => {
        try {
          done(null, parseNdjson(body.toString()));
        } catch (err) {
          done(err as Error, undefined);
        }
      },
    );
    // Any other media type: 415 naming the two accepted ones.
    app.addContentTypeParser("*", (_request, _payload, done) => {
      done(new DomainError("unsupported_media_type", MEDIA_TYPES), undefined);
    });

    app.post(
      "/activity/generations",
      {
        bodyLimit: INGEST_BODY_LIMIT,
        config: { auth: "management", rateLimit: routeLimit(ctx.config.rateLimit.management) },
        schema: {
          tags: ["Activity"],
          summary: "Ingest generation records",
          description:
            'Body: application/json {"generations": [...]} or application/x-ndjson (one record per line), ' +
            `1 to ${MAX_RECORDS} records. All or nothing; idempotent by id.`,
          body: IngestBody,
          response: { 200: IngestResponse },
        },
        // The body is checked by the ingest validator (every problem listed), not by Ajv.
        validatorCompiler: (req) => (req.httpPart === "body" ? () => true : validatorCompiler(req)),
      },
      async (request) => {
        const items = recordsOf(request.body);
        const result = await ingestGenerations(ctx, principal(request).organizationId, items);
        return { data: result };
      },
    );
  });
}
