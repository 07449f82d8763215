import type { ServerResponse } from "node:http";
import type { SseSink } from "../../gateway/chat/stream.js";

/**
 * A streamed answer's HTTP response, as the data plane's sink. What is written in one turn of the
 * event loop (the head and the first events; the events of one upstream read) leaves at the end of
 * that turn as one HTTP chunk in one socket write: no event waits for a later upstream read, and a
 * turn costs one system call and one chunk frame, not one frame per event (Node frames each write
 * of a chunked response with four socket writes). `head` writes the status and headers (without
 * sending them: they leave with the turn's first write, or alone when it has none).
 *
 * Once the stream's end is being recorded (`settling`), what is pending waits for the end of the
 * turn's I/O (setImmediate) instead: the recording journal's write of that turn runs first, so the
 * final events (usage, `[DONE]`) that follow it leave with the rest in one write, and nothing waits
 * past that turn when the record takes longer.
 */
export function sseResponse(res: ServerResponse, head: (headers: Record<string, string>) => void): SseSink {
  let pending = "";
  let scheduled = false;
  let settling = false;
  let deferred = false;
  const flush = (): void => {
    if (settling && !deferred) {
      deferred = true;
      setImmediate(flush);
      return;
    }
    scheduled = false;
    if (res.destroyed || res.writableEnded) {
      pending = "";
      return;
    }
    if (pending === "") {
      // Only the turn of start() can have nothing pending (a write always adds): the head alone.
      // (Not `headersSent`: it is true from writeHead on, before the head has left.)
      res.flushHeaders();
      return;
    }
    const text = pending;
    pending = "";
    res.cork();
    res.write(text);
    res.uncork();
  };
  const atEndOfTurn = (): void => {
    if (scheduled) return;
    scheduled = true;
    process.nextTick(flush);
  };
  return {
    start(headers) {
      head(headers);
      atEndOfTurn();
    },
    write(text) {
      if (res.destroyed) return;
      pending += text;
      atEndOfTurn();
    },
    settling() {
      settling = true;
    },
    end(last) {
      if (res.destroyed) return;
      const text = pending + (last ?? "");
      pending = "";
      if (text === "") res.end();
      else res.end(text);
    },
    ready(stop) {
      // What is pending leaves at the end of this turn: the buffer's state is the last flush's.
      if (!res.writableNeedDrain || res.destroyed || stop.aborted) return null;
      return new Promise<void>((done) => {
        const go = (): void => {
          res.off("drain", go);
          res.off("close", go);
          stop.removeEventListener("abort", go);
          done();
        };
        res.on("drain", go);
        res.on("close", go);
        stop.addEventListener("abort", go);
      });
    },
  };
}
