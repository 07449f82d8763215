import pino from "pino";
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
 * Credential-shaped text anywhere in a line: a Gatehouse key (`sk-gh-v1-…`), any `sk-…` style key,
 * and the value of a Bearer or Basic authorization.
 */
const CREDENTIAL_RE =
  /\b(sk-[A-Za-z0-9]{1,8}-v1-|sk-(?:or-|ant-|proj-)?)[A-Za-z0-9_-]{8,}|\b(Bearer|Basic)\s+[^\s",]+/g;

/** Replaces credential-shaped text in a log line with `[redacted]`. */
export function redactCredentials(line: string): string {
  return line.replace(CREDENTIAL_RE, (m: string, prefix: string | undefined, scheme: string | undefined) =>
    scheme ? `${scheme} [redacted]` : `${prefix ?? ""}[redacted]`,
  );
}

/** A request URL for the log: the path only; a query string (which may carry a key) is never logged. */
export function logUrl(url: string): string {
  const q = url.indexOf("?");
  return q < 0 ? url : `${url.slice(0, q)}?[redacted]`;
}

/**
 * Structured JSON logs with request ids. Credentials never reach a log line: the Authorization
 * header and any body are redacted, request logs carry method, path (no query string) and status
 * only, and every line is scanned for credential-shaped text as it is written. One line per
 * request ("request completed", written by the app's onResponse hook). Lines are written
 * asynchronously (batched under load; flushed on exit).
 */
export function loggerOptions(config: Pick<Config, "logLevel">): FastifyServerOptions["logger"] {
  return {
    level: config.logLevel,
    stream: pino.destination({ dest: 1, sync: false }),
    hooks: { streamWrite: redactCredentials },
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
        url: logUrl(req.url),
        id: req.id,
      }),
    },
  };
}
