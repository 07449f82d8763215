import { StreamFailed, type Answer, type Surface, type Usage } from "./surface.ts";
import { count, list, money, parseData, record, str, type Json } from "./wire-json.ts";

/**
 * POST /responses (OpenAI's Responses API, stateless: `store: false`): instructions as
 * `instructions`, the turns as `input` messages. The stream is named events, each with its
 * `type`: text comes in `response.output_text.delta` (a refusal in `response.refusal.delta`), and
 * exactly one terminal event carries the whole response with its usage: `response.completed`,
 * `response.incomplete` (cut at the token limit: still an answer), or `response.failed`
 * (docs/surfaces/responses.md "Streaming").
 */
const usageOf = (u: unknown): Usage | null => {
  if (u === undefined || u === null) return null;
  const x = record(u);
  return { prompt: count(x.input_tokens), completion: count(x.output_tokens), cost: money(x.cost) };
};

/** The response's text: `output_text` when given, else its message items' text and refusal parts. */
function textOf(response: Json): string {
  if (typeof response.output_text === "string") return response.output_text;
  return list(response.output)
    .map(record)
    .filter((item) => item.type === "message")
    .flatMap((item) => list(item.content).map(record))
    .map((part) => str(part.type === "refusal" ? part.refusal : part.text))
    .join("");
}

const TERMINAL = new Set(["response.completed", "response.incomplete"]);

export const responsesSurface: Surface = {
  api: "responses",
  label: "Responses",
  path: "/responses",
  headers: {},
  request: (c, model, stream) => ({
    model,
    stream,
    store: false,
    ...(c.system ? { instructions: c.system } : {}),
    input: c.turns.map((t) =>
      t.role === "user"
        ? { type: "message", role: "user", content: [{ type: "input_text", text: t.text }] }
        : { type: "message", role: "assistant", content: [{ type: "output_text", text: t.text }] },
    ),
  }),
  whole(body): Answer {
    const r = record(body);
    return { text: textOf(r), usage: usageOf(r.usage), done: true };
  },
  step(answer, ev): Answer {
    if (ev.data === "[DONE]") return answer;
    const data = parseData(ev.data);
    const type = str(data.type) || ev.event;
    switch (type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
        return { ...answer, text: answer.text + str(data.delta) };
      case "response.failed": {
        const r = record(data.response);
        const message = str(record(r.error).message) || "the response failed";
        throw new StreamFailed(message, { text: answer.text, usage: usageOf(r.usage), done: true });
      }
      case "error":
        throw new StreamFailed(str(data.message) || "the stream failed", { ...answer, done: true });
      default: {
        if (type === null || !TERMINAL.has(type)) return answer;
        const r = record(data.response);
        // The terminal response is the whole answer: its text wins over the deltas gathered.
        return { text: textOf(r) || answer.text, usage: usageOf(r.usage), done: true };
      }
    }
  },
};
