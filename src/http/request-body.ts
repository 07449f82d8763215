import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { errorCodes } from "fastify";

const { FST_ERR_CTP_BODY_TOO_LARGE, FST_ERR_CTP_INVALID_CONTENT_LENGTH } = errorCodes;

/**
 * A request's whole body as bytes, for a content-type parser: what Fastify's `parseAs: "buffer"`
 * reads, with the same checks and errors (413 past `limit`, 400 when the bytes received do not
 * match Content-Length or the stream fails), and one shortcut. A small request arrives with its
 * headers in one read, and Node's HTTP parser hands the request over at its headers, then buffers
 * the body of the same read as soon as the request's handlers return: so the body is taken at
 * once from the request's buffer (`read()`), looking once more after the current callback (a
 * microtask) when the parser runs before it is buffered (the authentication hook answers a known
 * key synchronously), instead of through the stream's `data` and `end` events, whose `end` comes
 * later. At 50 requests/s that answers ~60 µs sooner at p50 (bench/experiments/request-body.ts,
 * docs/performance.md). Anything else (a body still arriving, no Content-Length, a stream a hook
 * replaced) is read through the events as before.
 */
export function readWholeBody(
  raw: IncomingMessage,
  payload: Readable,
  limit: number,
  done: (err: Error | null, body?: Buffer) => void,
  lookedAgain = false,
): void {
  const declared = raw.headers["content-length"];
  const length = declared === undefined ? Number.NaN : Number(declared);
  if (length > limit) {
    done(new FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  if (
    payload === raw &&
    raw.readableFlowing === null &&
    raw.readableLength > 0 &&
    raw.readableLength === length
  ) {
    // Everything Content-Length announced is buffered (Node never buffers more for a request).
    // Node copies what its HTTP parser hands over, so this is no view of a shared read buffer.
    done(null, raw.read() as Buffer);
    return;
  }
  if (!lookedAgain && payload === raw && raw.readableFlowing === null && !raw.complete && length > 0) {
    // Not (all) buffered yet: the rest of the read the headers came in is buffered once the
    // current callback returns.
    queueMicrotask(() => readWholeBody(raw, payload, limit, done, true));
    return;
  }
  readThroughEvents(payload, length, limit, done);
}

function readThroughEvents(
  payload: Readable,
  length: number,
  limit: number,
  done: (err: Error | null, body?: Buffer) => void,
): void {
  let received = 0;
  const chunks: Buffer[] = [];
  const stop = (): void => {
    payload.removeListener("data", onData);
    payload.removeListener("end", onEnd);
    payload.removeListener("error", onEnd);
  };
  function onData(chunk: Buffer | string): void {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    received += bytes.length;
    if (received > limit) {
      stop();
      done(new FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    chunks.push(bytes);
  }
  function onEnd(err?: Error & { statusCode?: number }): void {
    stop();
    if (err) {
      if (!(typeof err.statusCode === "number" && err.statusCode >= 400)) err.statusCode = 400;
      done(err);
      return;
    }
    if (!Number.isNaN(length) && received !== length) {
      done(new FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      return;
    }
    done(null, Buffer.concat(chunks, received));
  }
  payload.on("data", onData);
  payload.on("end", onEnd);
  payload.on("error", onEnd);
  payload.resume();
}
