import type { ProviderChoice } from "../../providers/provider.js";
import { isObject, type Json } from "./body-fields.js";
import { ReasoningDetails, viewOf } from "./reasoning-carry.js";
import {
  callIdFor,
  functionCallItem,
  incompleteReason,
  itemId,
  logprobsOf,
  messageItem,
  reasoningItem,
  refusalPart,
  responseOwnFields,
  responsesUsage,
  textPart,
  type ItemStatus,
} from "./responses-items.js";
import type { ResponsesEcho } from "./responses-request.js";

/**
 * A chat completion (the body chat/complete.ts answers) → the Responses result object
 * (docs/surfaces/responses.md "Result object"). Its first choice (the gateway serves one) gives
 * the output items, in the order a model produces them: reasoning, the message, the function
 * calls. `finish_reason: "length"` makes the response `incomplete` (`max_output_tokens`), and
 * its last item too.
 */

/** The parts of a chat.completion body read here. */
export interface ChatCompletionAnswer {
  id: string;
  model: string;
  choices: readonly {
    message: ProviderChoice["message"];
    finish_reason: string | null;
    logprobs?: Record<string, unknown>;
  }[];
  usage?: Record<string, unknown>;
}

export interface ResponseTimes {
  /** Unix seconds. */
  createdAt: number;
  completedAt: number;
}

export function chatToResponse(
  completion: ChatCompletionAnswer,
  echo: ResponsesEcho,
  opts: ResponseTimes,
): Json {
  const id = completion.id;
  const choice = completion.choices[0];
  const incomplete = incompleteReason(choice?.finish_reason);
  const output: Json[] = [];
  const pending: { kind: "rs" | "msg" | "fc"; build: (id: string, status: ItemStatus) => Json }[] = [];
  if (choice) {
    const m = choice.message;
    const details = new ReasoningDetails();
    details.add(m.reasoning_details);
    if (details.details.length > 0 || (typeof m.reasoning === "string" && m.reasoning !== "")) {
      pending.push({
        kind: "rs",
        build: (at, s) => reasoningItem(at, details.details, viewOf(details.details, m.reasoning), s),
      });
    }
    const calls = (m.tool_calls ?? []).filter(isObject);
    const text = typeof m.content === "string" ? m.content : "";
    const refusal = typeof m.refusal === "string" ? m.refusal : null;
    if (text !== "" || refusal !== null || calls.length === 0) {
      const parts: Json[] = [];
      if (text !== "" || refusal === null) parts.push(textPart(text, logprobsOf(choice.logprobs)));
      if (refusal !== null) parts.push(refusalPart(refusal));
      pending.push({ kind: "msg", build: (at, s) => messageItem(at, parts, s) });
    }
    for (const c of calls) {
      const fn = isObject(c.function) ? c.function : {};
      pending.push({
        kind: "fc",
        build: (at, s) =>
          functionCallItem(
            at,
            typeof c.id === "string" && c.id !== "" ? c.id : callIdFor(id, output.length),
            typeof fn.name === "string" ? fn.name : "",
            typeof fn.arguments === "string" ? fn.arguments : "",
            s,
            echo,
          ),
      });
    }
  }
  pending.forEach((p, i) => {
    const last = i === pending.length - 1;
    output.push(p.build(itemId(p.kind, id, i), incomplete !== null && last ? "incomplete" : "completed"));
  });
  return {
    ...responseOwnFields(
      { id, model: completion.model, createdAt: opts.createdAt },
      {
        status: incomplete !== null ? "incomplete" : "completed",
        completedAt: opts.completedAt,
        output,
        usage: completion.usage ? responsesUsage(completion.usage) : null,
        incomplete,
        error: null,
      },
    ),
    ...echo.fields,
  };
}
