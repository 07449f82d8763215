import { randomBytes } from "node:crypto";
import { DomainError } from "../../domain/errors.js";
import { estimatePrompt, promptTokensFor, type PromptEstimate } from "../tokens/count-tokens.js";
import type { ImageRule } from "../tokens/image-tokens.js";
import { storedContent } from "../../broadcast/stored-content.js";
import type { GeneratedOutput } from "./generated.js";
import { planHold, worstCase, type HoldAsk } from "../reservations/enforcement.js";
import { tokenCost, type Prices } from "../reservations/token-cost.js";
import type { Gateway } from "../gateway.js";
import type { HoldHandle } from "../reservations/hold.js";
import type { KeyPolicy } from "../../domain/policy/policy.js";
import { keyWorkspace } from "../inference-auth.js";
import {
  UpstreamError,
  UpstreamTimeout,
  abandonedAfterSending,
  type ChatRequestBody,
  type NativeRequest,
  type ProviderChunk,
  type ProviderUsage,
  type UpstreamCall,
} from "../providers/provider.js";
import type { ServedGeneration } from "../recording/record-generation.js";
import { planAttempts, type Attempt, type ProviderPrefs } from "./attempts.js";
import { requestParameters } from "../catalog/parameters.js";
import { speaksNative } from "../catalog/catalog.js";
import type { Charge } from "./wire.js";
import type { CancelSignal } from "../cancellation.js";
import type { RequestSlots } from "../fair-use/in-flight-limits.js";
import type { Api } from "../surfaces/api.js";
import { allowedAttempts, type RequestGuardrails } from "../guardrails/request-guardrails.js";

/** A validated chat request (schemas/chat.ts) and who sent it. */
export interface ChatBody extends ChatRequestBody {
  model?: string;
  models?: string[];
  stream?: boolean | null;
  provider?: ProviderPrefs | null;
  user?: string;
  session_id?: string;
}

export interface ChatCall {
  key: KeyPolicy;
  body: ChatBody;
  /** The API surface the request came through (recorded with the generation). */
  api: Api;
  /** The request in a provider's own API, for attempts on a provider of that kind (UpstreamCall.native). */
  native?: NativeRequest;
  /**
   * Headers an answer carries when it was served through the translation to the chat shape (what
   * the translation left out: x-gatehouse-left-out); an answer from a provider that took `native`
   * as sent does not carry them.
   */
  translatedHeaders?: Record<string, string>;
  referer: string | null;
  appTitle: string | null;
  /** process.hrtime.bigint() when the request arrived. */
  arrivedNs: bigint;
  /** Aborted when the client goes away. */
  clientGone: CancelSignal;
  /**
   * What cancels the upstream call: a shutdown's grace running out, and for a stream also its
   * client going away (aborted after `clientGone`); a whole answer's client that leaves is still
   * charged what it asked for, so only a shutdown stops it.
   */
  upstreamStop: CancelSignal;
  /**
   * The request's slots (in-flight-limits.ts): its key's, taken when it was admitted, and the
   * provider's of each attempt, taken by `hold` before the attempt is reserved. The route
   * releases them once the request has ended.
   */
  slots: RequestSlots;
  /**
   * The request's guardrails, combined, its content already scanned and `body` / `native`
   * redacted where a filter says so (src/gateway/guardrails/); absent: none apply.
   */
  guardrails?: RequestGuardrails;
}

/**
 * Not copied to the upstream's body: the router extras, and the completion cap, which is set from
 * the hold (capMaxTokens). The rest of the OpenAI body is forwarded (`stream_options` too: the
 * OpenAI-compatible adapter adds `include_usage` to it, or drops it from a whole answer).
 */
const NOT_FORWARDED = new Set([
  "model",
  "models",
  "provider",
  "session_id",
  "stream",
  "route",
  "transforms",
  "plugins",
  "usage",
  "debug",
  "trace",
  "max_tokens",
  "max_completion_tokens",
]);

/** CSPRNG bytes drawn 4 KiB at a time: one call into the CSPRNG per ~227 ids, not one per id. */
let entropy = Buffer.alloc(0);
let entropyAt = 0;

/**
 * A new generation id: `gen-`, the creation time in milliseconds (13 digits), `-`, 144 random bits
 * (base64url). Time first, so that ids sort by creation: each record store's index on the id takes
 * new ids at its end, and a group commit of many generations writes a few index pages instead of
 * one per generation (a quarter of the WAL writes in docs/performance.md). The random part keeps
 * ids unguessable and unique across instances.
 */
export function newGenerationId(now = Date.now()): string {
  if (entropyAt + 18 > entropy.length) {
    entropy = randomBytes(4096);
    entropyAt = 0;
  }
  const random = entropy.toString("base64url", entropyAt, entropyAt + 18);
  entropyAt += 18;
  return `gen-${String(now).padStart(13, "0")}-${random}`;
}

export const pricesOf = (a: Attempt): Prices => ({
  promptPerMTokNano: a.endpoint.promptPricePerMTokNano,
  completionPerMTokNano: a.endpoint.completionPricePerMTokNano,
  cacheReadPerMTokNano: a.endpoint.cacheReadPricePerMTokNano,
  cacheWritePerMTokNano: a.endpoint.cacheWritePricePerMTokNano,
});

/** State shared by both answer modes. */
export class ChatRun {
  readonly id: string;
  readonly created: number;
  readonly createdAt: Date;
  attempts: Attempt[];
  /** The prompt counted once (its text, and its images for each provider's rule). */
  readonly prompt: PromptEstimate;
  /**
   * The prompt's estimated tokens for the attempt being made (set by `hold`): its images counted
   * by that provider's rule (image-tokens.ts); before any hold, by the first attempt's.
   */
  promptEstimate: number;
  readonly tried: ServedGeneration["attempts"] = [];
  /** Milliseconds of Gatehouse's own work before the upstream call (auth, policy, reservation). */
  overheadMs = 0;
  /** Headers saying what was reserved (x-gatehouse-max-tokens and whether it was capped). */
  holdHeaders: Record<string, string> = {};
  /**
   * The client asked not to see the reasoning (`reasoning.exclude: true`, or the older
   * `include_reasoning: false`): the model still reasons, and is charged for it, but `reasoning`
   * and `reasoning_details` are left out of the answer.
   */
  readonly hideReasoning: boolean;

  constructor(
    readonly gw: Gateway,
    readonly call: ChatCall,
  ) {
    this.createdAt = gw.clock.now();
    this.id = newGenerationId(this.createdAt.getTime());
    this.created = Math.floor(this.createdAt.getTime() / 1000);
    const prefs = call.body.provider;
    // A provider whose share this workspace already uses is skipped while another can serve.
    this.attempts = gw.limits.withRoom(
      allowedAttempts(
        call.guardrails,
        planAttempts(
          gw.catalog,
          call.body.model,
          call.body.models,
          prefs,
          prefs?.require_parameters === true ? requestParameters(call.body) : [],
          call.api === "embeddings" ? "embedding" : "chat",
        ),
      ),
      call.key.workspaceId,
    );
    this.prompt = estimatePrompt(call.body.messages, call.body.tools);
    this.promptEstimate = this.promptEstimateFor(this.attempts[0]);
    const reasoning = call.body.reasoning as { exclude?: unknown } | null | undefined;
    this.hideReasoning = reasoning?.exclude === true || call.body.include_reasoning === false;
  }

  /**
   * Adds the organization's usable BYOK keys to the attempts (byok-routing.ts). A key's
   * `allowed_user_ids` are matched against the calling key's `creator_user_id`, which only a
   * management key sets; the request's own `user` field is attribution, never a credential.
   */
  async withByok(): Promise<this> {
    const { key } = this.call;
    // The guardrails filtered the attempts already: a BYOK key changes an attempt's credential,
    // never its model, provider or region, so nothing it adds needs their check again.
    this.attempts = await this.gw.byok.expand(this.attempts, {
      organizationId: key.organizationId,
      workspaceId: key.workspaceId,
      keyHash: key.hash,
      creatorUserId: key.creatorUserId,
    });
    return this;
  }

  /** The prompt's estimated tokens when `a` serves it: images by its provider's rule. */
  promptEstimateFor(a: Attempt | undefined): number {
    return promptTokensFor(this.prompt, imageRuleOf(a));
  }

  /**
   * Takes the attempt's slot at its provider (throws the 429 when the workspace's share of it is
   * in use), reserves the attempt's worst case (throws the 402/403 refusal) and builds its
   * upstream body.
   */
  async hold(a: Attempt, n: number): Promise<{ hold: HoldHandle; body: ChatRequestBody }> {
    const { key, body } = this.call;
    this.call.slots.at(a.provider);
    this.promptEstimate = this.promptEstimateFor(a);
    const workspace = await keyWorkspace(this.gw.policy, key);
    const requested = requestedMaxTokens(body);
    const ask: HoldAsk = {
      prices: pricesOf(a),
      promptTokens: this.promptEstimate,
      requestedMaxTokens: requested,
      modelMaxCompletionTokens: a.endpoint.maxCompletionTokens,
    };
    let hold: HoldHandle;
    try {
      hold = await this.gw.holds.take(
        {
          id: `${this.id}:${n}`,
          organizationId: key.organizationId,
          key,
          workspace,
          // BYOK spend counts toward the key's limit / the budgets only where the flags say so.
          countsKey: !a.byok || key.includeByokInLimit,
          countsWorkspace: !a.byok || workspace.includeByokInBudgets,
          byok: a.byok !== undefined,
          ...(this.call.guardrails && this.call.guardrails.budgets.length > 0
            ? { guardrailBudgets: this.call.guardrails.budgets }
            : {}),
          now: this.createdAt,
          expectedNano: worstCase(ask).worst,
        },
        (room) => planHold(room, ask),
      );
    } catch (err) {
      this.refused(err);
    }
    const out: ChatRequestBody = { messages: body.messages };
    for (const [k, v] of Object.entries(body)) if (!NOT_FORWARDED.has(k)) out[k] = v;
    capMaxTokens(out, body, hold.plan.maxTokens);
    this.holdHeaders = {
      "x-gatehouse-max-tokens": String(hold.plan.maxTokens),
      "x-gatehouse-max-tokens-capped": String(hold.plan.capped),
    };
    this.overheadMs = Number(process.hrtime.bigint() - this.call.arrivedNs) / 1e6;
    return { hold, body: out };
  }

  /** A hold refused by the key's limit or a workspace budget: counted (metrics), then rethrown. */
  private refused(err: unknown): never {
    if (err instanceof DomainError && (err.status === 402 || err.status === 403)) {
      const scope = err.metadata?.scope;
      this.gw.observer?.refused?.(
        scope === "workspace" ? "workspace_budget" : scope === "guardrail" ? "guardrail_budget" : "key_limit",
      );
    }
    throw err;
  }

  /**
   * Usage from the upstream, or counted when it gave none: the prompt's estimate, and what was
   * generated in every choice (content, reasoning, tool calls' names and arguments), counted once,
   * at most `maxCompletion` (the completion tokens the hold covers: GeneratedOutput.count).
   */
  usageOf(
    reported: ProviderUsage | null,
    output: GeneratedOutput,
    maxCompletion: number,
    prompt: ProviderChunk["prompt"] | null = null,
  ): ProviderUsage {
    if (reported) return reported;
    const counted = output.count(maxCompletion);
    return {
      // The upstream's own count of the prompt when a stream gave one early, else the estimate.
      promptTokens: prompt?.promptTokens ?? this.promptEstimate,
      completionTokens: counted.completion,
      cachedTokens: prompt?.cachedTokens ?? 0,
      cacheWriteTokens: prompt?.cacheWriteTokens ?? 0,
      reasoningTokens: counted.reasoning,
    };
  }

  /**
   * What `usage` costs at the attempt's prices (token-cost.ts: cache reads and writes at their
   * own prices when the endpoint has them). Served with the organization's own key (BYOK): billed
   * there, not to credits.
   */
  chargeOf(a: Attempt, usage: ProviderUsage): Charge {
    const cost = tokenCost(pricesOf(a), usage);
    return a.byok
      ? { usage, cost, costNano: 0n, byokCostNano: cost.totalNano, isByok: true }
      : { usage, cost, costNano: cost.totalNano, byokCostNano: 0n, isByok: false };
  }

  /** Notes an attempt in the generation's attempt list (`status` null: no HTTP answer). */
  noteAttempt(a: Attempt, status: number | null, elapsedMs: number): void {
    this.gw.observer?.attempt(a.provider.slug, a.model.id, status);
    this.tried.push({
      provider: a.provider.slug,
      model: a.model.id,
      status,
      durationMs: Math.round(elapsedMs),
      byok: a.byok !== undefined,
    });
  }

  /**
   * Attempt `n` ended before any output reached the client, its hold not yet finished: noted in
   * the attempt list, and returned as the UpstreamError that decides whether the next attempt may
   * run (mayTryNext). When the provider had the request and the attempt was given up on (the
   * client left, a shutdown's grace ran out, a timeout: abandonedAfterSending), the provider bills
   * the prompt: the hold is settled at the prompt's estimate, as a cancelled generation
   * (settleAbandoned). Otherwise (refused, an error answer, nothing sent) the hold is released:
   * nothing is charged. Anything that is not an upstream failure is rethrown, its hold released:
   * it is not the provider's fault, and another provider would not help.
   */
  async attemptFailed(
    a: Attempt,
    n: number,
    hold: HoldHandle,
    err: unknown,
    elapsedMs: number,
    streamed: boolean,
  ): Promise<UpstreamError> {
    if (err instanceof UpstreamError && abandonedAfterSending(err)) {
      this.noteAttempt(a, null, elapsedMs);
      await this.settleAbandoned(a, n, hold, err, elapsedMs, streamed);
      return err;
    }
    await hold.release();
    this.noteAttempt(a, err instanceof UpstreamError ? err.status : null, elapsedMs);
    if (!(err instanceof UpstreamError)) throw err;
    return err;
  }

  /**
   * Whether the next attempt may run after `err`: it is retryable (429, 5xx, a timeout, a
   * connection failure), the client is still there and no shutdown stopped the request.
   */
  mayTryNext(err: UpstreamError): boolean {
    return err.retryable && !this.call.clientGone.aborted && !this.call.upstreamStop.aborted;
  }

  /**
   * Settles an attempt given up on after sending (attemptFailed): its prompt's estimate (the one
   * its hold reserved, priced at its provider's prices; BYOK as usual), nothing generated, as a
   * generation with `cancelled: true` and finish reason `timeout` or `cancelled`. It is recorded
   * under the request's generation id when it ends the request, else (a fallback follows, which
   * may be served under that id) under a new id of its own.
   */
  private async settleAbandoned(
    a: Attempt,
    n: number,
    hold: HoldHandle,
    err: UpstreamError,
    elapsedMs: number,
    streamed: boolean,
  ): Promise<void> {
    const usage: ProviderUsage = {
      promptTokens: this.promptEstimate,
      completionTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    };
    const last = n >= this.attempts.length - 1 || !this.mayTryNext(err);
    await this.settle(hold, a, this.chargeOf(a, usage), {
      // The attempt list as it is now: the fallback's own attempts are not this generation's.
      ...(last ? {} : { id: newGenerationId(), attempts: [...this.tried] }),
      finishReason: err instanceof UpstreamTimeout ? "timeout" : "cancelled",
      streamed,
      cancelled: true,
      upstreamId: null,
      latencyMs: elapsedMs,
      generationTimeMs: elapsedMs,
      output: null,
    });
  }

  /** Whether attempt `a` gets the request as the client sent it (its provider speaks that API). */
  private isNative(a: Attempt): boolean {
    return this.call.native !== undefined && speaksNative(a.provider, this.call.native.kind);
  }

  upstreamCall(a: Attempt, body: ChatRequestBody): UpstreamCall {
    return {
      upstreamModel: a.endpoint.upstreamModel,
      body,
      timeoutMs: timeoutOf(this.gw, a),
      ...(a.byok ? { apiKey: a.byok.secret } : {}),
      ...(this.isNative(a) ? { native: this.call.native } : {}),
    };
  }

  /**
   * The headers of the answer attempt `a` serves, whole or streamed: what was reserved, Gatehouse's
   * overhead, the generation's id, and what a translation left out when `a` was translated.
   */
  answerHeaders(a: Attempt): Record<string, string> {
    return {
      ...(this.isNative(a) ? {} : this.call.translatedHeaders),
      ...this.holdHeaders,
      "x-gatehouse-overhead-ms": this.overheadMs.toFixed(3),
      "x-gatehouse-generation-id": this.id,
    };
  }

  /**
   * Records the generation (the one accounting path, group-committed by the gateway's recorder),
   * then drops the hold: settle. The hold counts against other requests until the record is
   * stored, either way (in this process's store at the answer's charge from here on, no longer
   * its worst case). Durable recording (the default) resolves once the record is stored (a
   * shared store: the answer that follows is already in the key's usage everywhere) or, on a store
   * this process owns, once it is in the recording journal (journal.ts); deferred recording
   * (GATEHOUSE_RECORDING) resolves at once. A failure after the answer is reported to the
   * recorder's listener.
   */
  async settle(
    hold: HoldHandle,
    a: Attempt,
    charge: Charge,
    f: {
      /** The generation's id when not the request's (an attempt abandoned before a fallback). */
      id?: string;
      /** Its attempts when not the request's. */
      attempts?: ServedGeneration["attempts"];
      finishReason: string | null;
      streamed: boolean;
      cancelled: boolean;
      upstreamId: string | null;
      latencyMs: number;
      generationTimeMs: number;
      /** What was generated; null: nothing. */
      output: string | null;
    },
  ): Promise<void> {
    const { key, body } = this.call;
    // What Broadcast may keep: text, binary parts as placeholders, at most the configured bytes.
    const content = storedContent(body.messages, f.output, this.gw.config.broadcastMaxContextBytes);
    const g: ServedGeneration = {
      id: f.id ?? this.id,
      key,
      model: a.model.id,
      api: this.call.api,
      provider: a.provider.slug,
      providerName: a.provider.name,
      createdAt: this.createdAt,
      appTitle: this.call.appTitle,
      referer: this.call.referer,
      externalUser: body.user ?? null,
      sessionId: body.session_id ?? null,
      promptTokens: charge.usage.promptTokens,
      completionTokens: charge.usage.completionTokens,
      cachedTokens: charge.usage.cachedTokens,
      reasoningTokens: charge.usage.reasoningTokens,
      costNano: charge.costNano,
      byokCostNano: charge.byokCostNano,
      cacheCostNano: charge.cost.cacheNano,
      isByok: charge.isByok,
      latencyMs: Math.round(f.latencyMs),
      generationTimeMs: Math.round(f.generationTimeMs),
      finishReason: f.finishReason,
      streamed: f.streamed,
      cancelled: f.cancelled,
      upstreamId: f.upstreamId,
      attempts: f.attempts ?? this.tried,
      input: content.input,
      output: content.output,
      params: paramsOf(body),
      ...(this.call.guardrails?.invoked
        ? { guardrail: { invoked: true, flags: this.call.guardrails.flags } }
        : {}),
    };
    const { recorder, journal } = this.gw;
    this.gw.observer?.generation(g, this.overheadMs);
    // Answers that may precede their commit wait for it anyway while the recorder is backlogged,
    // so that its queue stays bounded.
    const wait = !this.gw.answersBeforeCommit || recorder.backlogged();
    const settled = hold.settle(() => recorder.record(g), charge.costNano + charge.byokCostNano);
    if (wait) {
      await settled;
      return;
    }
    const failed = (err: unknown): void => {
      // Tried again by the gateway's pass (gateway.ts); a journaled one stays in the journal too.
      this.gw.failedRecords.add(g);
      recorder.reportFailure(err, g.id);
    };
    if (!journal) {
      settled.catch(failed);
      return;
    }
    // Journaled (durable on a store this process owns): the answer waits for the journal; the
    // entry is released once the record is committed. If the record fails, the entry stays, and
    // the record is tried again every few seconds (and at the next start).
    const journaled = journal.append(g);
    // Observed below only once the journal has answered: a commit that fails first (a slow disk
    // that is full) must not be an unhandled rejection meanwhile, which would end the process.
    settled.catch(() => undefined);
    void journaled.then(
      () => settled.then(() => journal.release(g.id), failed),
      () => undefined, // not journaled: the answer waits for the commit (below)
    );
    try {
      await journaled;
    } catch {
      // The journal cannot take it (disk full?): the answer waits for the commit instead.
      await settled;
    }
  }
}

/** Anthropic's image rule for its adapter; OpenAI's for every other provider (and the mock). */
const imageRuleOf = (a: Attempt | undefined): ImageRule =>
  a?.provider.kind === "anthropic" ? "anthropic" : "openai";

function paramsOf(body: ChatBody): Record<string, number | string | boolean> | null {
  const out: Record<string, number | string | boolean> = {};
  for (const k of [
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "frequency_penalty",
    "presence_penalty",
  ]) {
    const v = body[k];
    if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** The completion tokens the client asked for: the smaller of max_tokens and max_completion_tokens. */
export function requestedMaxTokens(body: ChatBody): number | null {
  const a = body.max_tokens ?? null;
  const b = body.max_completion_tokens ?? null;
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/**
 * The upstream may generate no more than the hold covers: the field the client used (both when it
 * sent both) carries the reserved completion tokens, `max_tokens` when it sent neither. A client's
 * value above the model's maximum, or a request without one capped by what the key has left, would
 * otherwise let the upstream generate past the reservation, and the charge past the limit. `out`
 * holds neither field (copied without them: deleting would slow the body's serialization).
 */
export function capMaxTokens(out: ChatRequestBody, body: ChatBody, reserved: number): void {
  const completion = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null;
  const plain = body.max_tokens !== undefined && body.max_tokens !== null;
  if (completion) out.max_completion_tokens = reserved;
  if (plain || !completion) out.max_tokens = reserved;
}

/** The attempt's first-byte deadline: its provider's `timeout_ms`, else the gateway's. */
export const timeoutOf = (gw: Gateway, a: Attempt): number =>
  a.provider.timeoutMs ?? gw.config.upstreamTimeoutMs;

/**
 * The HTTP answer for an upstream failure when no byte has reached the client: the last
 * attempt's failure. A timeout is 524 (the SDK's EdgeNetworkTimeoutResponseError); an upstream
 * 429 stays 429 and carries the upstream's Retry-After as `metadata.retry_after_seconds` (the
 * chat route sends it as the Retry-After header).
 */
export function upstreamFailure(err: unknown): DomainError {
  if (err instanceof UpstreamTimeout) {
    return new DomainError("upstream_timeout", `Upstream timeout: ${err.message}`, {
      error_type: "provider",
      provider_status: null,
      timeout_ms: err.timeoutMs,
    });
  }
  if (err instanceof UpstreamError) {
    const meta = { error_type: "provider", provider_status: err.status };
    if (err.status === 429) {
      return new DomainError("rate_limited", `Upstream rate limited: ${err.message}`, {
        ...meta,
        retry_after_seconds: err.retryAfterMs === null ? null : Math.ceil(err.retryAfterMs / 1000),
      });
    }
    if (err.status === 400 || err.status === 422)
      return new DomainError("invalid_request", `Upstream rejected the request: ${err.message}`, meta);
    if (err.status === 503)
      return new DomainError("service_unavailable", `Upstream unavailable: ${err.message}`, meta);
    return new DomainError("bad_gateway", `Upstream error: ${err.message}`, meta);
  }
  return new DomainError("bad_gateway", "Upstream error");
}

/** A stream delta without its reasoning (`hideReasoning`); the same object when it has none. */
export function withoutReasoning<T extends Record<string, unknown>>(m: T): T {
  if (!("reasoning" in m) && !("reasoning_details" in m)) return m;
  const { reasoning: _r, reasoning_details: _d, ...rest } = m;
  return rest as T;
}
