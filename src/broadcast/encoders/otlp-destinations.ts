import { SENTRY_DSN_RE, type DestinationType } from "../../domain/destinations/destination-types.js";
import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import { basicAuth, field, headersFor, optional, trimBase } from "./config-access.js";
import type { DestinationEncoder } from "./encoder.js";
import { langfuseAttributes } from "./langfuse-attributes.js";
import { openInferenceAttributes } from "./openinference-attributes.js";
import { otlpEncoder } from "./otlp-encoder.js";
import { signStandardWebhook } from "./webhook-signature.js";

type Encoder = DestinationEncoder<DestinationConfig>;

/** The OTLP/HTTP JSON destination types (docs/broadcast.md "OTLP types"), one small table row each. */
export const OTLP_ENCODERS = {
  /** Any OTLP/HTTP receiver: `endpoint` used as given, authentication through `headers`. */
  "otel-collector": otlpEncoder({
    url: (c) => field("otel-collector", c, "endpoint"),
    headers: (c) => headersFor(c, {}),
  }),
  /**
   * OTLP JSON to `url` with the configured method (the hosted original's webhook); signed with
   * the Standard Webhooks scheme at send time when `signingSecret` is set.
   */
  webhook: otlpEncoder({
    url: (c) => field("webhook", c, "url"),
    method: (c) => (field("webhook", c, "method") === "PUT" ? "PUT" : "POST"),
    headers: (c) => headersFor(c, {}),
    batchIdHeader: "webhook-id",
    // A user's own endpoint, often a small web app: batches stay at 100 generations.
    maxBatch: 100,
    sign: (request, c, now) => {
      const secret = optional(c, "signingSecret");
      if (secret === "") return Promise.resolve(request);
      // A connection test has no batch: its message id is `msg_test_` + the send time.
      const id = request.headers["webhook-id"] ?? `msg_test_${now.getTime()}`;
      return Promise.resolve(signStandardWebhook(request, secret, id, now));
    },
  }),
  /** Grafana Cloud's OTLP gateway: Basic instanceId:apiKey. */
  grafana: otlpEncoder({
    url: (c) => `${trimBase(field("grafana", c, "baseUrl"))}/otlp/v1/traces`,
    headers: (c) =>
      headersFor(c, {
        authorization: basicAuth(field("grafana", c, "instanceId"), field("grafana", c, "apiKey")),
      }),
  }),
  /** New Relic OTLP: region endpoint, `api-key` header; attribute values at most 4095 characters. */
  newrelic: otlpEncoder({
    url: (c) =>
      field("newrelic", c, "region") === "eu"
        ? "https://otlp.eu01.nr-data.net/v1/traces"
        : "https://otlp.nr-data.net/v1/traces",
    headers: (c) => headersFor(c, { "api-key": field("newrelic", c, "licenseKey") }),
    options: () => ({ maxValueLength: 4095 }),
    maxBytes: 1_000_000,
  }),
  /** Arize AX OTLP: `space_id` + `api_key` headers; the project is the resource attribute. */
  arize: otlpEncoder({
    url: (c) => `${trimBase(field("arize", c, "baseUrl"))}/v1/traces`,
    headers: (c) =>
      headersFor(c, { space_id: field("arize", c, "spaceKey"), api_key: field("arize", c, "apiKey") }),
    options: (c) => ({
      metadataPrefix: "metadata.",
      resourceAttributes: () => ({ "openinference.project.name": field("arize", c, "modelId") }),
      spanAttributes: openInferenceAttributes,
    }),
  }),
  /** LangSmith OTLP: `x-api-key`, `Langsmith-Project`, and the workspace for org-scoped keys. */
  langsmith: otlpEncoder({
    url: (c) => `${trimBase(field("langsmith", c, "endpoint"))}/otel/v1/traces`,
    headers: (c) => {
      const own: Record<string, string> = {
        "x-api-key": field("langsmith", c, "apiKey"),
        "langsmith-project": field("langsmith", c, "project"),
      };
      const workspace = optional(c, "workspaceId");
      if (workspace !== "") own["x-tenant-id"] = workspace;
      return headersFor(c, own);
    },
  }),
  /** Sentry's OTLP endpoint (`otlpEndpoint`), authenticated with the DSN's public key. */
  sentry: otlpEncoder({
    url: (c) => field("sentry", c, "otlpEndpoint"),
    headers: (c) =>
      headersFor(c, { "x-sentry-auth": `sentry sentry_key=${sentryPublicKey(field("sentry", c, "dsn"))}` }),
  }),
  /** Ramp's AI-usage intake: OTLP JSON to `baseUrl` as given, Bearer `apiKey`. */
  ramp: otlpEncoder({
    url: (c) => field("ramp", c, "baseUrl"),
    headers: (c) => headersFor(c, { authorization: `Bearer ${field("ramp", c, "apiKey")}` }),
  }),
  /** Langfuse's OTLP endpoint, Basic publicKey:secretKey, real-time v4 ingestion. */
  langfuse: otlpEncoder({
    url: (c) => `${trimBase(field("langfuse", c, "baseUrl"))}/api/public/otel/v1/traces`,
    headers: (c) =>
      headersFor(c, {
        authorization: basicAuth(field("langfuse", c, "publicKey"), field("langfuse", c, "secretKey")),
        "x-langfuse-ingestion-version": "4",
      }),
    options: () => ({ spanAttributes: langfuseAttributes }),
  }),
} satisfies Partial<Record<DestinationType, Encoder>>;

/** The public key of a Sentry DSN (`https://<public key>[:<secret>]@host/...`). */
export function sentryPublicKey(dsn: string): string {
  const m = SENTRY_DSN_RE.exec(dsn);
  if (m === null) throw new Error("sentry config: dsn is not a Sentry DSN");
  return m[1]!;
}
