import { StreamFailed, type Answer, type Surface, type Usage } from "./surface.ts";
import { count, list, money, parseData, record, str, type Json } from "./wire-json.ts";

/**
 * POST /chat/completions (OpenAI's format): the conversation as `messages` (instructions as the
 * first, `system`, message); a stream of `data:` chunks, each with a delta of the first choice,
 * usage on the last chunk, then `data: [DONE]` (docs/wire-compatibility.md "Chat streams").
 */
const usageOf = (u: unknown): Usage | null => {
  if (u === undefined || u === null) return null;
  const x = record(u);
  return { prompt: count(x.prompt_tokens), completion: count(x.completion_tokens), cost: money(x.cost) };
};

const firstChoice = (body: Json): Json => record(list(body.choices)[0]);

export const chatSurface: Surface = {
  api: "chat",
  label: "Chat completions",
  path: "/chat/completions",
  headers: {},
  request: (c, model, stream) => ({
    model,
    stream,
    messages: [
      ...(c.system ? [{ role: "system", content: c.system }] : []),
      ...c.turns.map((t) => ({ role: t.role, content: t.text })),
    ],
  }),
  whole(body): Answer {
    const b = record(body);
    return { text: str(record(firstChoice(b).message).content), usage: usageOf(b.usage), done: true };
  },
  step(answer, ev): Answer {
    if (ev.data === "[DONE]") return { ...answer, done: true };
    const chunk = parseData(ev.data);
    const piece = str(record(firstChoice(chunk).delta).content);
    const next = { ...answer, text: answer.text + piece, usage: usageOf(chunk.usage) ?? answer.usage };
    // A failure after the stream opened: a chunk with `error` and the usage charged so far.
    if (chunk.error !== undefined)
      throw new StreamFailed(str(record(chunk.error).message) || "the stream failed", {
        ...next,
        done: true,
      });
    return next;
  },
};
