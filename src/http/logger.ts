import { writeSync } from "node:fs";
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
/** One write's most bytes (sonic-boom's maxWrite): chunks waiting for a write in progress join up to it. */
const LOG_MAX_WRITE_BYTES = 256 * 1024;
/** Buffered lines are written at most this late. */
export const LOG_FLUSH_MS = 100;
/**
 * Bytes of log lines held at most while stdout does not take them (a stalled reader): past it,
 * new lines are dropped and counted (`LogDestination.dropped`) rather than held without bound.
 */
export const LOG_MAX_BUFFER_BYTES = 16 * 1024 * 1024;

/** The destinations not closed yet: what each still holds is written when the process exits. */
const open = new Set<LogDestination>();
let exitHookInstalled = false;

/** The logger's stream (what pino writes each line to). */
export interface LogLineStream {
  write(line: string): void;
}

/**
 * stdout for the logger: lines gather here up to LOG_BUFFER_BYTES and go out in one asynchronous
 * write, at most `flushMs` late; `flush()` writes them now. An asynchronous write costs a
 * thread-pool round trip (~40 µs of CPU on the 2-core VM of docs/performance.md, against ~3 µs for
 * the line itself), and one per request line was ~3 % of a busy gateway. Writes stay
 * asynchronous, so a slow reader of stdout never blocks the event loop. What is still held is
 * written synchronously when the process exits.
 *
 * The lines gather in an array and are joined once per chunk. They are not handed to sonic-boom
 * one by one to gather there (its minLength): it appends each line to the string it holds and
 * measures that whole string's UTF-8 length on every write, which flattens it, so that a line
 * cost a copy of everything gathered before it (3.5 % of a busy gateway's main thread at 64 KiB).
 * sonic-boom gets whole chunks, and writes each at once or, while a write is in progress, as soon
 * as it ends (minLength 0).
 */
export class LogDestination {
  /** The logger's stream: `loggerOptions` and pino write lines here. */
  readonly stream: LogLineStream = { write: (line) => this.take(line) };
  /** The descriptor's asynchronous writer. */
  readonly file: ReturnType<typeof pino.destination>;
  private lines: string[] = [];
  private gathered = 0;
  /** Bytes taken (gathered or handed to `file`), and bytes `file` has written. */
  private taken = 0;
  private written = 0;
  private readonly timer: NodeJS.Timeout;

  /** Lines dropped because the buffer was full (stdout stalled). */
  dropped = 0;

  constructor(
    private readonly fd = 1,
    flushMs = LOG_FLUSH_MS,
    private readonly maxBytes = LOG_MAX_BUFFER_BYTES,
  ) {
    this.file = pino.destination({ dest: fd, sync: false, minLength: 0, maxWrite: LOG_MAX_WRITE_BYTES });
    this.file.on("write", (n: number) => (this.written += n));
    this.timer = setInterval(() => this.flush(), flushMs);
    this.timer.unref();
    open.add(this);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on("exit", () => {
        for (const d of open) d.flushSync();
      });
    }
  }

  /** Bytes taken and not written yet. */
  get buffered(): number {
    return this.taken - this.written;
  }

  /** Writes everything taken so far: now, or as soon as the write in progress ends. */
  flush(): void {
    const chunk = this.gatheredChunk();
    if (chunk === "") return;
    try {
      this.file.write(chunk);
    } catch {
      // destroyed (shutdown): nothing more can be written
    }
  }

  /**
   * Writes everything held, synchronously (the process is exiting, or a test ends): what the
   * writer holds, then the lines gathered here. Not through the writer's asynchronous write, which
   * an exiting process would finish only behind whatever else libuv's pool has queued; a write
   * already in progress is the writer's own.
   */
  flushSync(): void {
    const bytes = this.gathered;
    const chunk = this.gatheredChunk();
    try {
      this.file.flushSync();
      if (chunk !== "") {
        writeSync(this.fd, chunk);
        this.written += bytes;
      }
    } catch {
      // destroyed, or not open yet
    }
  }

  /** The gathered lines as one string ("" when none), forgotten here. */
  private gatheredChunk(): string {
    if (this.lines.length === 0) return "";
    const chunk = this.lines.length === 1 ? (this.lines[0] as string) : this.lines.join("");
    this.lines = [];
    this.gathered = 0;
    return chunk;
  }

  /** Writes what is held, synchronously, and closes the descriptor. */
  close(): void {
    this.flushSync();
    clearInterval(this.timer);
    open.delete(this);
    this.file.destroy();
  }

  private take(line: string): void {
    const bytes = Buffer.byteLength(line);
    if (this.taken - this.written + bytes > this.maxBytes) {
      this.dropped++;
      return;
    }
    this.lines.push(line);
    this.gathered += bytes;
    this.taken += bytes;
    if (this.gathered >= LOG_BUFFER_BYTES) this.flush();
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
      streamWrite: (line) => redactCredentials(line),
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
