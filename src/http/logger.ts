import type { FastifyServerOptions } from "fastify";
import type { Config } from "../config/config.js";

/**
 * Structured JSON logs with request ids. Credentials never reach a log line: the Authorization
 * header and any body are redacted, and request logs carry method, path and status only.
 */
export function loggerOptions(config: Pick<Config, "logLevel">): FastifyServerOptions["logger"] {
  return {
    level: config.logLevel,
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        "req.body",
        "res.body",
        "*.apiKey",
        "*.key",
        "*.config",
        "*.secret",
        "*.password",
        "*.token",
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
