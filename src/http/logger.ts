import type { FastifyServerOptions } from "fastify";
import type { Config } from "../config/config.js";

/** Property names whose values are credentials wherever they appear in a log object. */
const SECRET_NAMES = [
  "apiKey",
  "api_key",
  "key",
  "bootstrapKey",
  "encryptionKey",
  "config",
  "headers",
  "authorization",
  "secret",
  "password",
  "token",
  "body",
];

/**
 * Structured JSON logs with request ids. Credentials never reach a log line: the Authorization
 * header and any body are redacted, and request logs carry method, path and status only.
 */
export function loggerOptions(config: Pick<Config, "logLevel">): FastifyServerOptions["logger"] {
  return {
    level: config.logLevel,
    redact: {
      // pino's "*.name" matches one level down only, so each name is listed at the top level too.
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        "req.body",
        "res.body",
        ...SECRET_NAMES,
        ...SECRET_NAMES.map((name) => `*.${name}`),
      ],
      censor: "[redacted]",
    },
    serializers: {
      req: (req: { method: string; url: string; id: string }) => ({
        method: req.method,
        url: req.url,
        id: req.id,
      }),
    },
  };
}
