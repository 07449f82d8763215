import { CountBudget, countTextTokens } from "../tokens/count-tokens.js";

/** A choice's or tool call's index as sent, where it is one (0..1023); anything else counts as 0. */
const slot = (index: number): number => (Number.isInteger(index) && index >= 0 && index < 1024 ? index : 0);

/** One choice's generated strings, as they arrived. */
interface ChoiceOutput {
  content: string;
  /** A refusal (a message's or a stream delta's): counted, not part of the stored output. */
  refusal: string;
  reasoning: string;
  /** Tool calls by their index in the choice: the function's name and its arguments. */
  tools: { name: string; arguments: string }[];
}

/**
 * What an answer generated, gathered for the counted fallback (ChatRun.usageOf, an upstream that
 * reports no usage): every choice's content (and refusal), its reasoning, and its tool calls'
 * names and arguments. A stream adds each delta's strings as it passes (concatenation only, no
 * counting per chunk); a whole answer adds its messages. Counted once, at the end (count), and
 * only when the upstream reported no usage. The generation's stored output is the first choice's
 * content (text), as before.
 */
export class GeneratedOutput {
  private readonly choices: ChoiceOutput[] = [];

  private choice(index: number): ChoiceOutput {
    return (this.choices[slot(index)] ??= { content: "", refusal: "", reasoning: "", tools: [] });
  }

  /** A finished answer's message. */
  addMessage(
    index: number,
    m: { content: unknown; reasoning?: unknown; refusal?: unknown; tool_calls?: unknown[] },
  ): void {
    const c = this.choice(index);
    if (typeof m.content === "string") c.content += m.content;
    if (typeof m.refusal === "string") c.refusal += m.refusal;
    if (typeof m.reasoning === "string") c.reasoning += m.reasoning;
    if (m.tool_calls) for (const t of m.tool_calls) this.addTool(c, c.tools.length, t);
  }

  /** One stream delta (the OpenAI shape: strings, and tool-call pieces keyed by their `index`). */
  addDelta(index: number, d: Record<string, unknown>): void {
    const c = this.choice(index);
    if (typeof d.content === "string") c.content += d.content;
    if (typeof d.refusal === "string") c.refusal += d.refusal;
    if (typeof d.reasoning === "string") c.reasoning += d.reasoning;
    if (Array.isArray(d.tool_calls)) {
      for (const t of d.tool_calls as unknown[]) {
        const at = (t as { index?: unknown } | null)?.index;
        this.addTool(c, typeof at === "number" ? at : Math.max(c.tools.length - 1, 0), t);
      }
    }
  }

  private addTool(c: ChoiceOutput, index: number, t: unknown): void {
    const f = (t as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (typeof f !== "object" || f === null) return;
    const tool = (c.tools[slot(index)] ??= { name: "", arguments: "" });
    if (typeof f.name === "string") tool.name += f.name;
    if (typeof f.arguments === "string") tool.arguments += f.arguments;
  }

  /** The first choice's content: the generation's stored output. */
  text(): string {
    return this.choices.find((c) => c !== undefined)?.content ?? "";
  }

  /**
   * Tokens generated, counted: each choice's content, refusal, reasoning, and each tool call's
   * name and arguments, counted apart (one budget for the whole answer, as a prompt's texts share one).
   * `reasoning` is the part of `completion` that was reasoning. At most `maxCompletion`: the
   * completion tokens the upstream was allowed (the hold's), which an upstream keeps to in its own
   * tokens; a count above it is this counter's tokenizer disagreeing with the upstream's, and
   * charging it would take the charge past the hold's worst case (and a key past its limit).
   */
  count(maxCompletion = Number.POSITIVE_INFINITY): { completion: number; reasoning: number } {
    const budget = new CountBudget();
    let completion = 0;
    let reasoning = 0;
    for (const c of this.choices) {
      if (c === undefined) continue;
      completion += countTextTokens(c.content, budget) + countTextTokens(c.refusal, budget);
      const r = countTextTokens(c.reasoning, budget);
      completion += r;
      reasoning += r;
      for (const t of c.tools) {
        if (t === undefined) continue;
        completion += countTextTokens(t.name, budget) + countTextTokens(t.arguments, budget);
      }
    }
    completion = Math.min(completion, maxCompletion);
    return { completion, reasoning: Math.min(reasoning, completion) };
  }
}
