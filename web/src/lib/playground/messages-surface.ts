import { StreamFailed, type Answer, type Surface, type Usage } from "./surface.ts";
import { count, list, money, parseData, record, str } from "./wire-json.ts";

/**
 * POST /messages (Anthropic's Messages API; the key as a Bearer token, as Anthropic's client sends
 * it): instructions as `system`, the turns as `messages`, `max_tokens` (which Anthropic requires).
 * The stream is named events (docs/surfaces/messages.md "Streaming"): `message_start` (input
 * counts), `content_block_delta` (`text_delta` pieces of text blocks), `message_delta`
 * (cumulative usage with the cost), `message_stop` (the end), `ping`, or `error`.
 */
export const MESSAGES_MAX_TOKENS = 1024;

/**
 * Anthropic counts its input classes apart (docs/surfaces/messages.md "Usage"): the prompt is
 * `input_tokens` + cache reads + cache writes. A count given as null keeps the one known before.
 */
function usageOf(u: unknown, before: Usage | null): Usage {
  const x = record(u);
  const known = (k: string) => typeof x[k] === "number";
  const prompt =
    known("input_tokens") || known("cache_read_input_tokens") || known("cache_creation_input_tokens")
      ? count(x.input_tokens) + count(x.cache_read_input_tokens) + count(x.cache_creation_input_tokens)
      : (before?.prompt ?? 0);
  return {
    prompt,
    completion: known("output_tokens") ? count(x.output_tokens) : (before?.completion ?? 0),
    cost: money(x.cost) ?? before?.cost ?? null,
  };
}

export const messagesSurface: Surface = {
  api: "messages",
  label: "Messages",
  path: "/messages",
  headers: { "anthropic-version": "2023-06-01" },
  request: (c, model, stream) => ({
    model,
    max_tokens: MESSAGES_MAX_TOKENS,
    stream,
    ...(c.system ? { system: c.system } : {}),
    messages: c.turns.map((t) => ({ role: t.role, content: t.text })),
  }),
  whole(body): Answer {
    const m = record(body);
    const text = list(m.content)
      .map(record)
      .filter((b) => b.type === "text")
      .map((b) => str(b.text))
      .join("");
    return { text, usage: m.usage === undefined ? null : usageOf(m.usage, null), done: true };
  },
  step(answer, ev): Answer {
    const data = parseData(ev.data);
    // Anthropic's client goes by the event's name; the data's `type` says the same.
    switch (ev.event ?? str(data.type)) {
      case "message_start":
        return { ...answer, usage: usageOf(record(data.message).usage, answer.usage) };
      case "content_block_delta": {
        const delta = record(data.delta);
        return delta.type === "text_delta" ? { ...answer, text: answer.text + str(delta.text) } : answer;
      }
      case "message_delta":
        return { ...answer, usage: usageOf(data.usage, answer.usage) };
      case "message_stop":
        return { ...answer, done: true };
      case "error":
        throw new StreamFailed(str(record(data.error).message) || "the stream failed", {
          ...answer,
          done: true,
        });
      default:
        return answer;
    }
  },
};
