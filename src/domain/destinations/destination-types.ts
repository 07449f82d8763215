/**
 * The 17 observability destination types as data (docs/wire-compatibility.md "Destinations record").
 * Each type lists its config fields; validation, defaults and masking are generated from this table,
 * so adding a type or a field is a change here and nowhere else. Every type also accepts an optional
 * `headers` record (see config-headers.ts), which is not listed per type.
 */

/** How a config value is checked. `url` = absolute http(s) URL; `pattern` = a regular expression. */
export type FieldKind =
  | { kind: "string" }
  | { kind: "url" }
  | { kind: "enum"; values: readonly string[] }
  | { kind: "pattern"; pattern: RegExp; description: string };

export interface ConfigField {
  name: string;
  /** Required and non-empty. A field with a default is never required. */
  required: boolean;
  default?: string;
  /** A credential: masked on read, at least 4 characters when non-empty. */
  secret: boolean;
  check: FieldKind;
  maxLength?: number;
}

const STRING: FieldKind = { kind: "string" };
const URL_KIND: FieldKind = { kind: "url" };

const req = (name: string, check: FieldKind = STRING): ConfigField => ({
  name,
  required: true,
  secret: false,
  check,
});
const secret = (name: string, required = true): ConfigField => ({
  name,
  required,
  secret: true,
  check: STRING,
});
const opt = (name: string, check: FieldKind = STRING): ConfigField => ({
  name,
  required: false,
  secret: false,
  check,
});
const withDefault = (name: string, value: string, check: FieldKind = STRING): ConfigField => ({
  name,
  required: false,
  default: value,
  secret: false,
  check,
});

/** Sentry DSN: https://<public key>[:<secret>]@<host>[/<path>]/<project id> */
export const SENTRY_DSN_RE = /^https:\/\/([^:@]+)(?::[^@]*)?@([^/]+)(?:\/[^/]+)*\/(\d+)\/?$/;
/**
 * A Standard Webhooks signing secret: `whsec_` + the base64 of 24 to 64 random bytes (the form
 * every Standard Webhooks library takes; docs/broadcast.md "Webhook signatures").
 */
export const WEBHOOK_SECRET_RE = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;
/** Snowflake account identifier (1..255 characters). */
export const SNOWFLAKE_ACCOUNT_RE = /^[a-zA-Z0-9_]+(?:[.-][a-zA-Z0-9_]+)*$/;

export const DESTINATION_TYPES = {
  arize: [
    secret("apiKey"),
    secret("spaceKey"),
    req("modelId"),
    withDefault("baseUrl", "https://otlp.arize.com", URL_KIND),
  ],
  braintrust: [
    secret("apiKey"),
    req("projectId"),
    withDefault("baseUrl", "https://api.braintrust.dev", URL_KIND),
  ],
  clickhouse: [
    req("host", URL_KIND),
    req("database"),
    req("username"),
    secret("password"),
    withDefault("table", "OPENROUTER_TRACES"),
  ],
  datadog: [secret("apiKey"), req("mlApp"), withDefault("url", "https://api.datadoghq.com", URL_KIND)],
  grafana: [
    secret("apiKey"),
    req("instanceId"),
    withDefault("baseUrl", "https://otlp-gateway-prod-us-west-0.grafana.net", URL_KIND),
  ],
  langfuse: [
    secret("publicKey"),
    secret("secretKey"),
    withDefault("baseUrl", "https://us.cloud.langfuse.com", URL_KIND),
  ],
  langsmith: [
    secret("apiKey"),
    withDefault("project", "main"),
    withDefault("endpoint", "https://api.smith.langchain.com", URL_KIND),
    opt("workspaceId"),
  ],
  newrelic: [secret("licenseKey"), withDefault("region", "us", { kind: "enum", values: ["us", "eu"] })],
  opik: [secret("apiKey"), req("projectName"), req("workspace")],
  "otel-collector": [req("endpoint", URL_KIND)],
  posthog: [secret("apiKey"), withDefault("endpoint", "https://us.i.posthog.com", URL_KIND)],
  ramp: [
    secret("apiKey"),
    withDefault("baseUrl", "https://api.ramp.com/developer/v1/ai-usage/openrouter", URL_KIND),
  ],
  s3: [
    req("bucketName"),
    secret("accessKeyId"),
    secret("secretAccessKey"),
    secret("sessionToken", false),
    opt("region"),
    opt("endpoint", URL_KIND),
    withDefault("prefix", "openrouter-traces"),
    withDefault("pathTemplate", "{prefix}/{date}"),
  ],
  sentry: [
    {
      ...secret("dsn"),
      check: {
        kind: "pattern",
        pattern: SENTRY_DSN_RE,
        description: "a Sentry DSN (https://<key>@<host>/<project id>)",
      },
    },
    req("otlpEndpoint", URL_KIND),
  ],
  snowflake: [
    {
      ...req("account", {
        kind: "pattern",
        pattern: SNOWFLAKE_ACCOUNT_RE,
        description: "a Snowflake account identifier (letters, digits, _, joined by . or -)",
      }),
      maxLength: 255,
    },
    secret("token"),
    withDefault("database", "SNOWFLAKE_LEARNING_DB"),
    withDefault("schema", "PUBLIC"),
    withDefault("table", "OPENROUTER_TRACES"),
    withDefault("warehouse", "COMPUTE_WH"),
  ],
  weave: [
    secret("apiKey"),
    req("entity"),
    req("project"),
    withDefault("baseUrl", "https://trace.wandb.ai", URL_KIND),
  ],
  webhook: [
    req("url", URL_KIND),
    withDefault("method", "POST", { kind: "enum", values: ["POST", "PUT"] }),
    {
      ...secret("signingSecret", false),
      check: {
        kind: "pattern",
        pattern: WEBHOOK_SECRET_RE,
        description: "a Standard Webhooks secret (whsec_ followed by the base64 of 24 to 64 random bytes)",
      },
    },
  ],
} as const satisfies Record<string, readonly ConfigField[]>;

export type DestinationType = keyof typeof DESTINATION_TYPES;

export const DESTINATION_TYPE_NAMES = Object.keys(DESTINATION_TYPES) as DestinationType[];

export const isDestinationType = (t: string): t is DestinationType =>
  Object.prototype.hasOwnProperty.call(DESTINATION_TYPES, t);

export const configFields = (type: DestinationType): readonly ConfigField[] => DESTINATION_TYPES[type];

/** Longest accepted config string (tokens such as Snowflake JWTs can be long). */
export const MAX_CONFIG_STRING = 8192;
/** Shortest non-empty credential (the Terraform provider's rule). */
export const MIN_SECRET_LENGTH = 4;
