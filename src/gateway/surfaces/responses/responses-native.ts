import type { NativeRequest } from "../../providers/provider.js";
import { RESPONSES_REASONING_FORMAT } from "../../providers/openai/responses-answer.js";
import { CARRY_PREFIX, detailsOfItem } from "./reasoning-carry.js";
import { isObject, type Json } from "./body-fields.js";

/**
 * A Responses request as forwarded natively, to a provider that speaks the Responses API
 * (docs/surfaces/responses.md "Native pass-through"): the client's body as sent, but for the
 * reasoning items Gatehouse itself gave out. Those carry the answer's reasoning_details in
 * `encrypted_content` (reasoning-carry.ts), which no provider can read: each is turned back into
 * the reasoning item the provider gave (its id, summaries and own `encrypted_content`), or left
 * out when it holds none of a Responses provider's (another provider's reasoning, which this one
 * could not read either). Pure; the body was validated by the translation already.
 */
export function nativeResponsesRequest(raw: Json): NativeRequest {
  const input = raw.input;
  if (!Array.isArray(input) || !input.some(carried))
    return { kind: "openai-responses", body: raw, headers: {} };
  const restored: unknown[] = [];
  input.forEach((item, i) => {
    if (!carried(item)) restored.push(item);
    else {
      const own = providerReasoning(detailsOfItem(item as Json, `input[${i}]`));
      if (own) restored.push(own);
    }
  });
  return { kind: "openai-responses", body: { ...raw, input: restored }, headers: {} };
}

/** A reasoning item whose encrypted_content is Gatehouse's carry. */
function carried(item: unknown): boolean {
  return (
    isObject(item) &&
    item.type === "reasoning" &&
    typeof item.encrypted_content === "string" &&
    item.encrypted_content.startsWith(CARRY_PREFIX)
  );
}

/** The Responses provider's reasoning item among carried details; null when there is none. */
function providerReasoning(details: readonly Json[]): Json | null {
  const own = details.filter((d) => d.format === RESPONSES_REASONING_FORMAT);
  const encrypted = own.find((d) => d.type === "reasoning.encrypted" && typeof d.data === "string");
  if (!encrypted) return null;
  const summary = own
    .filter((d) => d.type === "reasoning.summary" && typeof d.summary === "string")
    .map((d) => ({ type: "summary_text", text: d.summary }));
  return {
    type: "reasoning",
    ...(typeof encrypted.id === "string" ? { id: encrypted.id } : {}),
    summary,
    encrypted_content: encrypted.data,
  };
}
