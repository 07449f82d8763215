import type { Insertable } from "kysely";
import { DESTINATION_TYPES, type DestinationType } from "../../src/domain/destinations/destination-types.js";
import { validateConfig, type DestinationConfig } from "../../src/domain/destinations/validate-config.js";
import type { DestinationsTable } from "../../src/stores/schema.js";

/** A distinctive planted secret: `PLANTED_<type>_<field>_7f3a` (easy to find in any payload). */
export const planted = (type: string, field: string): string =>
  `PLANTED_${type.replace(/-/g, "_")}_${field}_7f3a`;

/**
 * A validated config for every destination type, with every secret field (and a custom header
 * value) set to a planted string. Non-secret fields get realistic values.
 */
const RAW: Record<DestinationType, Record<string, unknown>> = {
  arize: { apiKey: planted("arize", "apiKey"), spaceKey: planted("arize", "spaceKey"), modelId: "shop-llm" },
  braintrust: { apiKey: planted("braintrust", "apiKey"), projectId: "proj_123" },
  clickhouse: {
    host: "https://ch.example.com:8443",
    database: "observability",
    username: "ingest",
    password: planted("clickhouse", "password"),
  },
  datadog: { apiKey: planted("datadog", "apiKey"), mlApp: "shop-bot", url: "https://api.us5.datadoghq.com" },
  grafana: { apiKey: planted("grafana", "apiKey"), instanceId: "123456" },
  langfuse: { publicKey: planted("langfuse", "publicKey"), secretKey: planted("langfuse", "secretKey") },
  langsmith: { apiKey: planted("langsmith", "apiKey"), project: "shop", workspaceId: "ws-42" },
  newrelic: { licenseKey: planted("newrelic", "licenseKey"), region: "eu" },
  opik: { apiKey: planted("opik", "apiKey"), projectName: "shop", workspace: "acme" },
  "otel-collector": {
    endpoint: "https://collector.example.com/v1/traces",
    headers: { Authorization: `Bearer ${planted("otel-collector", "header")}`, "X-Axiom-Dataset": "llm" },
  },
  posthog: { apiKey: planted("posthog", "apiKey") },
  ramp: { apiKey: planted("ramp", "apiKey") },
  s3: {
    bucketName: "trace-bucket",
    accessKeyId: "AKIDPLANTEDs3accessKeyId7f3a",
    secretAccessKey: planted("s3", "secretAccessKey"),
    sessionToken: planted("s3", "sessionToken"),
    region: "eu-west-1",
  },
  sentry: {
    dsn: `https://${planted("sentry", "dsnkey")}@o123.ingest.us.sentry.io/4507`,
    otlpEndpoint: "https://o123.ingest.us.sentry.io/api/4507/integration/otlp/v1/traces",
  },
  snowflake: { account: "myorg-acct1", token: planted("snowflake", "token") },
  weave: { apiKey: planted("weave", "apiKey"), entity: "acme", project: "shop" },
  webhook: {
    url: "https://hooks.example.com/otlp",
    method: "PUT",
    headers: { "X-Hook-Token": planted("webhook", "header") },
    signingSecret: `whsec_${Buffer.from(planted("webhook", "signingSecret")).toString("base64")}`,
  },
};

export const configFor = (type: DestinationType): DestinationConfig => validateConfig(type, RAW[type]);

/** Every planted secret string of a type's config (secret fields and header values). */
export function secretsOf(type: DestinationType): string[] {
  const raw = RAW[type];
  const out = DESTINATION_TYPES[type]
    .filter((f) => f.secret && typeof raw[f.name] === "string")
    .map((f) => raw[f.name] as string);
  for (const v of Object.values((raw.headers as Record<string, string> | undefined) ?? {}))
    if (v.includes("PLANTED")) out.push(v);
  return out;
}

/**
 * A destinations row written straight to the store (tests that need one without the API): the
 * given identity, enabled, every broadcast flag off, a placeholder ciphertext.
 */
export function destinationRow(r: {
  id: string;
  organizationId: string;
  workspaceId: string;
  type: string;
  at: string;
  enabled?: boolean;
}): Insertable<DestinationsTable> {
  return {
    id: r.id,
    organization_id: r.organizationId,
    workspace_id: r.workspaceId,
    type: r.type,
    name: r.id,
    enabled: r.enabled === false ? 0 : 1,
    privacy_mode: 0,
    broadcast_generation_cost: 0,
    broadcast_generation_identity: 0,
    broadcast_generation_request_context: 0,
    sampling_rate: 1,
    api_key_hashes: null,
    filter_rules: null,
    regions: "[]",
    config_ciphertext: "x",
    created_at: r.at,
    updated_at: r.at,
    deleted_at: null,
  };
}
