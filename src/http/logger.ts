import pino from "pino";
import type { FastifyServerOptions } from "fastify";
import type { Config } from "../config/config.js";
import { redactCredentials } from "../lib/credential-text.js";

/** pino's numeric level of "warn". */
const WARN = 40;

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

/** A request URL for the log: the path only; a query string (which may carry a key) is never logged. */
export function logUrl(url: string): string {
  const q = url.indexOf("?");
  return q < 0 ? url : `${url.slice(0, q)}?[redacted]`;
}

/**
 * Lines gather in memory up to this many bytes before one write (see LogDestination): at a busy
 * gateway's ~2,000 request lines a second (~350 bytes each), a 4 KiB buffer meant ~170
 * asynchronous writes a second, each a thread-pool round trip that cost the main thread as much as
 * a third of a request; at 64 KiB the 100 ms flush sends most lines, ~10 writes a second.
 */
export const LOG_BUFFER_BYTES = 64 * 1024;
/** One write's most bytes (sonic-boom's maxWrite, which must exceed its minLength). */
const LOG_MAX_WRITE_BYTES = 256 * 1024;
/** Buffered lines are written at most this late. */
export const LOG_FLUSH_MS = 100;
/**
 * Bytes of log lines held at most while stdout does not take them (a stalled reader): past it,
 * new lines are dropped and counted (`LogDestination.dropped`) rather than held without bound.
 */
export const LOG_MAX_BUFFER_BYTES = 16 * 1024 * 1024;

/**
 * stdout for the logger: lines gather up to LOG_BUFFER_BYTES and go out in one asynchronous write
 * (sonic-boom's minLength), at most `flushMs` late; `flush()` writes them now. An asynchronous
 * write costs a thread-pool round trip (~40 µs of CPU on the 2-core VM of docs/performance.md,
 * against ~3 µs for the line itself), and one per request line was ~3 % of a busy gateway. Writes
 * stay asynchronous, so a slow reader of stdout never blocks the event loop. What is still
 * buffered is written when the process exits (pino's exit hook for its destinations).
 *
 * It counts the bytes handed to the stream and those the stream reports written, so it knows
 * whether anything is left: sonic-boom's flush() does nothing while a write is in progress, and
 * after that write, less than minLength stays buffered until something flushes again. A flush that
 * found the stream busy is therefore repeated when the write ends ('drain'), and an idle logger
 * writes nothing.
 */
export class LogDestination {
  readonly stream: ReturnType<typeof pino.destination>;
  /** Bytes handed to the stream, and bytes it has written. */
  private noted = 0;
  private written = 0;
  /**
   * What the last flush asked for: everything noted up to this many bytes. A flush that found the
   * stream busy is repeated when the write ends until these bytes are written, and no further:
   * lines noted after the flush wait for minLength or the next flush, as they would have without
   * it (a flush that kept itself going would write every few lines under load).
   */
  private flushThrough = 0;
  private closed = false;

  /** Lines dropped because the buffer was full (stdout stalled). */
  dropped = 0;

  constructor(fd = 1, flushMs = LOG_FLUSH_MS, maxBytes = LOG_MAX_BUFFER_BYTES) {
    this.stream = pino.destination({
      dest: fd,
      sync: false,
      minLength: LOG_BUFFER_BYTES,
      maxWrite: LOG_MAX_WRITE_BYTES,
      maxLength: maxBytes,
    });
    this.stream.on("write", (n: number) => (this.written += n));
    this.stream.on("drop", (line: string) => {
      this.dropped++;
      this.written += Buffer.byteLength(line); // never written: not waiting either
    });
    this.stream.on("drain", () => {
      if (this.written < this.flushThrough) this.writeBuffered();
    });
    const timer = setInterval(() => this.flush(), flushMs);
    timer.unref();
    this.stream.once("close", () => {
      this.closed = true;
      clearInterval(timer);
    });
  }

  /** Notes a line handed to the stream (the logger's streamWrite hook calls it). */
  wrote(line: string): void {
    this.noted += Buffer.byteLength(line);
  }

  /** Bytes handed to the stream and not written yet. */
  get buffered(): number {
    return this.noted - this.written;
  }

  /** Writes everything noted so far, now or, if a write is in progress, when it ends. */
  flush(): void {
    if (this.buffered <= 0) return;
    this.flushThrough = this.noted;
    this.writeBuffered();
  }

  private writeBuffered(): void {
    if (this.closed) return;
    try {
      this.stream.flush();
    } catch {
      // being destroyed (shutdown): its end writes what is left
    }
  }
}

/**
 * Structured JSON logs with request ids. Credentials never reach a log line: the Authorization
 * header and any body are redacted, request logs carry method, path (no query string) and status
 * only, and every line is scanned for credential-shaped text as it is written. One line per
 * request ("request completed", written by the app's onResponse hook). Lines are written
 * asynchronously, gathered in LOG_BUFFER_BYTES at most LOG_FLUSH_MS late; a line at warn or above
 * is written at once, and so is everything before it (`out.flush()` does the same).
 */
export function loggerOptions(
  config: Pick<Config, "logLevel">,
  out: LogDestination = new LogDestination(),
): FastifyServerOptions["logger"] {
  return {
    level: config.logLevel,
    stream: out.stream,
    hooks: {
      streamWrite: (line) => {
        const safe = redactCredentials(line);
        out.wrote(safe);
        return safe;
      },
      logMethod(args, method, level) {
        method.apply(this, args);
        if (level >= WARN) out.flush();
      },
    },
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
