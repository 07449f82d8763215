import type { FastifyBaseLogger } from "fastify";
import type { Bindings, ChildLoggerOptions } from "pino";

/**
 * `request.log`, made on first use. Fastify gives every request a child logger bound to its id,
 * and pino builds a child by serializing its bindings through the redaction paths
 * (src/http/logger.ts), wildcards included: 2-4.5 µs a request in a tight loop on the 2-core VM
 * of docs/performance.md (bench/experiments/per-request.ts), ~1.4 % of a busy gateway's main thread in a
 * profile, for a logger that a request which logs nothing of its own (nearly all: the request
 * line is written by the app's onResponse hook) never uses. The child is the same pino child as
 * Fastify's default factory would make, with the same bindings and options; only when it is made
 * differs.
 */
export class DeferredChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The pino child, made now if it was not yet. */
  get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): FastifyBaseLogger["level"] {
    return this.made ? this.made.level : (this.options.level ?? this.parent.level);
  }

  set level(level: FastifyBaseLogger["level"]) {
    this.logger.level = level;
  }

  fatal(...args: unknown[]): void {
    this.log("fatal", args);
  }

  error(...args: unknown[]): void {
    this.log("error", args);
  }

  warn(...args: unknown[]): void {
    this.log("warn", args);
  }

  info(...args: unknown[]): void {
    this.log("info", args);
  }

  debug(...args: unknown[]): void {
    this.log("debug", args);
  }

  trace(...args: unknown[]): void {
    this.log("trace", args);
  }

  silent(...args: unknown[]): void {
    this.log("silent", args);
  }

  /** A call at `level` on the pino child, with the caller's arguments as they are. */
  private log(
    level: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent",
    args: unknown[],
  ): void {
    const l = this.logger;
    Reflect.apply(l[level], l, args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a request's logger, made when the request first logs. */
export function deferredChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new DeferredChildLogger(logger, bindings, options);
}
