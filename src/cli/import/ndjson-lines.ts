import { StringDecoder } from "node:string_decoder";

/** One line of an NDJSON stream; text is null when the line was longer than the limit (dropped). */
export interface Line {
  /** 1-based line number in the stream. */
  line: number;
  text: string | null;
}

export interface LineChunk {
  lines: Line[];
  /** Bytes of the stream consumed so far (for progress). */
  bytes: number;
}

/**
 * Splits a byte stream into lines without holding more than one chunk and one (bounded) partial
 * line: the stream is pulled chunk by chunk, so a slow consumer slows the reader (backpressure)
 * and memory stays constant whatever the size of the file. A line longer than maxLineChars is
 * reported with text null and its content is discarded as it streams by. A UTF-8 byte order
 * mark is dropped; a trailing CR (CRLF files) is left for the caller's trim.
 */
export async function* ndjsonLines(
  stream: AsyncIterable<Buffer | string>,
  maxLineChars: number,
): AsyncGenerator<LineChunk> {
  const decoder = new StringDecoder("utf8");
  let partial = "";
  let overflow = false;
  let lineNo = 0;
  let bytes = 0;
  let first = true;

  const take = (text: string, lines: Line[]) => {
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl === -1) break;
      lineNo += 1;
      if (overflow || partial.length + (nl - start) > maxLineChars) {
        lines.push({ line: lineNo, text: null });
      } else {
        lines.push({ line: lineNo, text: partial + text.slice(start, nl) });
      }
      partial = "";
      overflow = false;
      start = nl + 1;
    }
    if (start < text.length && !overflow) {
      partial += text.slice(start);
      if (partial.length > maxLineChars) {
        overflow = true;
        partial = "";
      }
    }
  };

  for await (const chunk of stream) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    bytes += buf.length;
    let text = decoder.write(buf);
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    const lines: Line[] = [];
    take(text, lines);
    if (lines.length > 0) yield { lines, bytes };
  }
  const rest = decoder.end();
  // A last line without a newline; nothing when the stream ended with one.
  if (rest === "" && partial === "" && !overflow) return;
  const lines: Line[] = [];
  take(rest + "\n", lines);
  yield { lines, bytes };
}
