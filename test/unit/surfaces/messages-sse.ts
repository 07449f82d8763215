/** Test helper: an SSE text as its events, each checked to have an `event:` line and JSON data. */
export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

export function parseSse(text: string): SseEvent[] {
  if (!text.endsWith("\n\n")) throw new Error("the text does not end with a blank line");
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((block) => {
      const lines = block.split("\n");
      if (lines.length !== 2 || !lines[0]!.startsWith("event: ") || !lines[1]!.startsWith("data: "))
        throw new Error(`not an "event:" + "data:" pair: ${JSON.stringify(block)}`);
      return {
        event: lines[0]!.slice("event: ".length),
        data: JSON.parse(lines[1]!.slice("data: ".length)) as Record<string, unknown>,
      };
    });
}

/** Each event as `name` or `name:index` (content block events) for order assertions. */
export const shape = (events: SseEvent[]): string[] =>
  events.map((e) => {
    const delta = e.data.delta as { type?: string } | undefined;
    const block = e.data.content_block as { type?: string } | undefined;
    if (e.event === "content_block_start") return `${e.event}:${String(e.data.index)}:${block?.type}`;
    if (e.event === "content_block_delta") return `${e.event}:${String(e.data.index)}:${delta?.type}`;
    if (e.event === "content_block_stop") return `${e.event}:${String(e.data.index)}`;
    return e.event;
  });
