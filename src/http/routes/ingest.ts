import type { FastifyInstance, FastifyRequest } from "fastify";
import { DomainError, invalid } from "../../domain/errors.js";
import { ingestGenerations } from "../../domain/ingest/ingest-generations.js";
import type { IngestInput } from "../../domain/ingest/records/read-body.js";
import { MAX_RECORDS } from "../../domain/ingest/records/validate-generations.js";
import type { AppContext } from "../context.js";
import { charsetProblem, ndjsonRecords, utf8Problem, wholeBody } from "../utf8-only.js";
import { principal } from "../plugins/auth.js";
import { routeLimit } from "../plugins/rate-limit.js";
import { IngestBody, IngestQuery, IngestResponse } from "../schemas/ingest.js";
import { validatorCompiler } from "../validation.js";

/** Ingest bodies carry up to 10,000 records: a larger limit than management requests. */
export const INGEST_BODY_LIMIT = 32 * 1024 * 1024;

const MEDIA_TYPES = "Content-Type: must be application/json or application/x-ndjson";

/**
 * The body is kept as bytes here: ingest decodes and parses it (on a worker thread when there is a
 * pool, which then receives the bytes without a copy). Bytes that are not UTF-8, and escaped lone
 * surrogates, are refused here first (utf8-only.ts), for both paths alike.
 */
const asInput =
  (format: "json" | "ndjson") =>
  (request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: IngestInput) => void) => {
    const problem =
      (format === "json" ? charsetProblem(request) : null) ??
      utf8Problem(body as Buffer, format === "json" ? wholeBody : ndjsonRecords);
    if (problem) done(problem);
    else done(null, { format, text: body });
  };

/** POST /activity/generations: JSON or NDJSON, all or nothing, idempotent by id (docs/activity.md). */
export async function ingestRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  await root.register(async (app) => {
    app.removeContentTypeParser("application/json");
    app.addContentTypeParser(
      "application/json",
      { parseAs: "buffer", bodyLimit: INGEST_BODY_LIMIT },
      asInput("json"),
    );
    app.addContentTypeParser(
      ["application/x-ndjson", "application/jsonl", "application/jsonlines"],
      { parseAs: "buffer", bodyLimit: INGEST_BODY_LIMIT },
      asInput("ndjson"),
    );
    // Any other media type: 415 naming the two accepted ones.
    app.addContentTypeParser("*", (_request, _payload, done) => {
      done(new DomainError("unsupported_media_type", MEDIA_TYPES), undefined);
    });

    app.post(
      "/activity/generations",
      {
        bodyLimit: INGEST_BODY_LIMIT,
        config: { auth: "management", rateLimit: routeLimit(ctx.config.rateLimit.ingest) },
        schema: {
          tags: ["Activity"],
          summary: "Ingest generation records",
          description:
            'Body: application/json {"generations": [...]} or application/x-ndjson (one record per line), ' +
            `1 to ${MAX_RECORDS} records. All or nothing; idempotent by id.`,
          querystring: IngestQuery,
          body: IngestBody,
          response: { 200: IngestResponse },
        },
        // The body is checked by the ingest validator (every problem listed), not by Ajv.
        validatorCompiler: (req) => (req.httpPart === "body" ? () => true : validatorCompiler(req)),
      },
      async (request) => {
        const input = request.body as IngestInput | undefined;
        // No body and no Content-Type: no parser ran, so nothing said what is missing.
        if (input === undefined)
          throw invalid(
            'body: is required: {"generations": [...]} as application/json, or one record per line as application/x-ndjson',
          );
        const { broadcast } = request.query as { broadcast?: "true" | "false" };
        const result = await ingestGenerations(ctx, principal(request).organizationId, input, {
          broadcast: broadcast !== "false",
        });
        return { data: result };
      },
    );
  });
}
