import { DomainError } from "../../domain/errors.js";
import { BUILTIN_FILTER_SLUGS, guardrailsOfKey } from "../../domain/guardrails/guardrail-policy.js";
import type { KeyPolicy, Policy } from "../../domain/policy/policy.js";
import { defaultGuardrailId } from "../../domain/workspaces/workspace-record.js";
import type { ChatBody } from "../chat/serve.js";
import type { NativeRequest } from "../providers/provider.js";
import type { Api } from "../surfaces/api.js";
import { allows, combineGuardrails, type EffectiveGuardrails } from "./combine.js";
import { scannerOf, type BlockedBy } from "./content-scan.js";
import type { RequestGuardrails } from "./request-guardrails.js";
import { scanRequest } from "./scan-request.js";

/** A model request as its surface hands it to the data plane. */
export interface GuardedParts {
  api: Api;
  body: ChatBody;
  native?: NativeRequest;
  /** Part of the prompt is not text (embeddings' token ids). */
  opaquePrompt?: boolean;
}

export interface Guarded {
  body: ChatBody;
  native?: NativeRequest;
  /** Absent: no guardrail governs the request. */
  guardrails?: RequestGuardrails;
}

const BUILTINS = new Set<string>(BUILTIN_FILTER_SLUGS);

/**
 * The most text (characters, the chat body and a native body each) content filters read in one
 * request: a filter scans ~100 KB in under a millisecond, crafted text up to ~20 times slower, so
 * this bounds what one request can cost. 2 Mi characters is over 500,000 tokens, more than any
 * model's context; a request with more text under content filters is refused (413).
 */
export const MAX_SCANNED_CHARS = 2 * 1024 * 1024;

/** The 403 for a request a content filter blocks: which guardrail, which rule, which labels. */
function blockedRefusal(blocked: readonly BlockedBy[]): DomainError {
  const first = blocked[0] as BlockedBy;
  const injection = blocked.filter((b) => b.filter === "regex-prompt-injection");
  const rule = BUILTINS.has(first.filter) ? "content_filter_builtins" : "content_filters";
  const labels = [...new Set(blocked.map((b) => b.label))];
  const metadata = {
    guardrail_id: first.guardrailId,
    rule,
    labels,
    ...(injection.length > 0 ? { patterns: ["regex-prompt-injection"] } : {}),
  };
  if (injection.length > 0 && injection[0] === first) {
    return new DomainError(
      "forbidden",
      `Request blocked: prompt injection patterns detected (guardrail '${first.guardrailName}', content_filter_builtins)`,
      metadata,
    );
  }
  return new DomainError(
    "forbidden",
    `Request blocked by guardrail '${first.guardrailName}' (${rule}): the request contains ${labels.join(", ")}`,
    metadata,
  );
}

/**
 * The guardrails of a key's request (docs/guardrails.md "Enforcement"), before anything is
 * reserved or forwarded: the workspace's default guardrail, the key's creator's member guardrail
 * and the key's own, read from the policy cache and combined (memoised per set of guardrails);
 * the request's text scanned by the combined content filters, in the data plane's chat body and
 * in the provider-native body where there is one, so what a provider sees, what is stored and
 * what Broadcast sends are the redacted text. A blocking filter's match is the 403. An
 * organization without guardrails costs one map lookup.
 */
export async function applyGuardrails(
  policy: Pick<Policy, "guardrails">,
  key: KeyPolicy,
  parts: GuardedParts,
): Promise<Guarded> {
  const org = await policy.guardrails(key.organizationId);
  if (org.byId.size === 0) return parts;
  const governing = guardrailsOfKey(org, key, defaultGuardrailId(key.workspaceId));
  if (governing.length === 0) return parts;
  const effective = combineGuardrails(governing);
  if (effective.empty) return parts;
  let { body, native } = parts;
  const flags = new Set<string>();
  let redacted = false;
  const scanner = scannerOf(effective);
  if (!scanner.empty) {
    if (parts.opaquePrompt) {
      const by = effective.filters[0];
      throw new DomainError(
        "forbidden",
        `Request blocked by guardrail '${by?.by.guardrailName ?? ""}': its content filters cannot read token-id input; send the input as text`,
        { guardrail_id: by?.by.guardrailId ?? null, rule: "content_filters" },
      );
    }
    const chat = scanRequest(body, scanner, { surface: "chat", maxChars: MAX_SCANNED_CHARS });
    const own = native
      ? scanRequest(native.body, scanner, {
          surface: native.kind === "anthropic" ? "messages" : "responses",
          maxChars: MAX_SCANNED_CHARS,
        })
      : null;
    if (chat.tooLarge || own?.tooLarge) {
      throw new DomainError(
        "payload_too_large",
        `The request's text is longer than the ${MAX_SCANNED_CHARS} characters its guardrails' content filters read; send less text`,
        { limit_chars: MAX_SCANNED_CHARS },
      );
    }
    const blocked = [...chat.blocked, ...(own?.blocked ?? [])];
    if (blocked.length > 0) throw blockedRefusal(blocked);
    for (const s of [chat, own]) {
      if (!s) continue;
      for (const l of s.flags.keys()) flags.add(l);
      if (s.redactions.size > 0) redacted = true;
    }
    body = chat.body as ChatBody;
    if (native && own) native = { ...native, body: own.body as Record<string, unknown> };
  }
  return {
    body,
    ...(native ? { native } : {}),
    guardrails: requestGuardrails(effective, [...flags], redacted),
  };
}

function requestGuardrails(e: EffectiveGuardrails, flags: string[], redacted: boolean): RequestGuardrails {
  return {
    refusalOf: (a) =>
      allows(e, {
        modelId: a.model.id,
        providerSlug: a.provider.slug,
        providerRegion: a.provider.dataRegion ?? "global",
        providerZdr: a.provider.zdr ?? false,
      }),
    budgets: e.budgets,
    flags,
    invoked: redacted || flags.length > 0,
  };
}
