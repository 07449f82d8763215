import { DESTINATION_TYPES, type DestinationType } from "../../src/domain/destinations/destination-types.js";

/** A valid config per type, with long secrets so that masking is visible. */
export const SAMPLE_CONFIGS: Record<DestinationType, Record<string, unknown>> = {
  arize: {
    apiKey: "arize_live_key_0123456789AbCd",
    spaceKey: "space_0123456789abcdEfGh",
    modelId: "tracing",
  },
  braintrust: { apiKey: "sk-braintrust-0123456789AbCd", projectId: "proj-1" },
  clickhouse: {
    host: "https://clickhouse.example.com:8123",
    database: "traces",
    username: "default",
    password: "ch-password-0123456789",
  },
  datadog: { apiKey: "dd0123456789abcdef0123456789AbCd", mlApp: "my-app" },
  grafana: { apiKey: "glc_0123456789abcdefAbCd", instanceId: "123456" },
  langfuse: { publicKey: "pk-lf-0123456789abEfGh", secretKey: "sk-lf-0123456789abAbCd" },
  langsmith: { apiKey: "lsv2_pt_0123456789AbCd" },
  newrelic: { licenseKey: "nr-license-0123456789AbCd", region: "eu" },
  opik: { apiKey: "opik-key-0123456789xyz", projectName: "proj", workspace: "ws" },
  "otel-collector": {
    endpoint: "https://otel.example.com:4318",
    headers: { Authorization: "Bearer otel-token-0123456789" },
  },
  posthog: { apiKey: "phc_0123456789abcdefAbCd" },
  ramp: { apiKey: "rmp_0123456789abcdefAbCd" },
  s3: {
    bucketName: "bucket",
    accessKeyId: "AKIA0123456789ABCDEF",
    secretAccessKey: "s3secret/0123456789abcdefEfGh",
    sessionToken: "session-token-0123456789",
  },
  sentry: {
    dsn: "https://abc123def456abc123@o123.ingest.sentry.io/4567",
    otlpEndpoint: "https://o123.ingest.sentry.io/api/4567/otlp",
  },
  snowflake: { account: "myorg-account1", token: "snowflake-token-0123456789" },
  weave: { apiKey: "wandb-key-0123456789AbCd", entity: "team", project: "proj" },
  webhook: {
    url: "https://hooks.example.com/in",
    method: "PUT",
    headers: { "X-Signature": "whsec_0123456789abcdef" },
    signingSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  },
};

/** Every credential in a sample config: secret fields and header values. */
export function secretsOf(type: DestinationType, config: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const f of DESTINATION_TYPES[type]) {
    const v = config[f.name];
    if (f.secret && typeof v === "string" && v !== "") out.push(v);
  }
  const headers = config.headers as Record<string, string> | undefined;
  if (headers) out.push(...Object.values(headers));
  return out;
}

export const createBody = (type: DestinationType, extra: Record<string, unknown> = {}) => ({
  name: `${type} destination`,
  type,
  config: SAMPLE_CONFIGS[type],
  ...extra,
});
