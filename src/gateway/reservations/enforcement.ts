import { DomainError } from "../../domain/errors.js";
import { BUDGET_INTERVALS, type BudgetInterval } from "../../domain/budgets/budget-intervals.js";
import { nanoToUsd } from "../../lib/money.js";
import type { Room, Scope } from "./room.js";
import { highestPromptPrice, type Prices } from "./token-cost.js";

const MILLION = 1_000_000n;

/**
 * What `promptTokens` and `completionTokens` may cost at most, in nano-USD, rounded up to the next
 * nano: every prompt token at the highest price a prompt token may have (highestPromptPrice: a
 * cache price above the prompt price counts), so that an answer's charge (token-cost.ts, however
 * its prompt splits between ordinary, cached and written tokens) never exceeds it for the same
 * counts. What reservations hold; for an endpoint without cache prices, the plain cost.
 */
export function costNano(p: Prices, promptTokens: number, completionTokens: number): bigint {
  const num =
    BigInt(promptTokens) * highestPromptPrice(p) + BigInt(completionTokens) * p.completionPerMTokNano;
  return (num + MILLION - 1n) / MILLION;
}

/** What a request holds: the worst-case cost, and the completion tokens it allows. */
export interface HoldPlan {
  amountNano: bigint;
  /** Completion tokens the hold covers (sent upstream as max_tokens when the client gave none). */
  maxTokens: number;
  /** True when the model's maximum was cut to what the limits have left. */
  capped: boolean;
}

export interface HoldAsk {
  prices: Prices;
  promptTokens: number;
  /** The client's max_tokens / max_completion_tokens, or null. */
  requestedMaxTokens: number | null;
  modelMaxCompletionTokens: number;
}

const left = (s: Scope): bigint => s.limitNano - s.spentNano - s.reservedNano;

function metadata(s: Scope, requested: number, affordable: number): Record<string, unknown> {
  return {
    scope: s.scope,
    ...(s.guardrail ? { guardrail_id: s.guardrail.id, rule: "limit_usd", holder: s.guardrail.holder } : {}),
    interval: s.interval,
    limit: nanoToUsd(s.limitNano),
    spent: nanoToUsd(s.spentNano),
    reserved: nanoToUsd(s.reservedNano),
    resets_at: s.resetsAt,
    requested_tokens: requested,
    affordable_tokens: Math.max(0, affordable),
  };
}

/** Completion tokens that fit in `room` nano-USD after the prompt (-1: not even the prompt). */
function affordableTokens(ask: HoldAsk, room: bigint): number {
  const prompt = costNano(ask.prices, ask.promptTokens, 0);
  if (room < prompt) return -1;
  if (ask.prices.completionPerMTokNano === 0n) return Number.MAX_SAFE_INTEGER;
  const t = ((room - prompt) * MILLION) / ask.prices.completionPerMTokNano;
  return t > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(t);
}

const rank = (interval: string): number => BUDGET_INTERVALS.indexOf(interval as BudgetInterval);

function refuse(s: Scope, scopesFailing: Scope[], requested: number, affordable: number): never {
  if (s.guardrail) {
    const g = s.guardrail;
    const whose = g.holder === "key" ? "this key's" : "the key's creator's (member)";
    throw new DomainError(
      "forbidden",
      s.spentNano >= s.limitNano
        ? `Request blocked by guardrail '${g.name}' (limit_usd, ${s.interval}): ${whose} budget is spent; it resets at ${s.resetsAt ?? "never"}`
        : `Request blocked by guardrail '${g.name}' (limit_usd, ${s.interval}): ${whose} remaining budget cannot take this request (requested up to ${requested} tokens, can only afford ${Math.max(0, affordable)}). A smaller max_tokens may fit.`,
      metadata(s, requested, affordable),
    );
  }
  if (s.scope === "key") {
    if (s.spentNano >= s.limitNano) {
      throw new DomainError(
        "forbidden",
        `Key limit exceeded (${s.interval}): the key has spent its limit; it resets at ${s.resetsAt ?? "never (lifetime limit)"}`,
        metadata(s, requested, affordable),
      );
    }
    throw new DomainError(
      "payment_required",
      `This request requires more than the key's remaining limit: requested up to ${requested} tokens, can only afford ${Math.max(0, affordable)}. A smaller max_tokens may fit.`,
      metadata(s, requested, affordable),
    );
  }
  // The broadest budget that cannot take the request, spent or not: a narrower one's reset alone
  // would not let it through.
  const broadest = scopesFailing
    .filter((x) => x.scope === "workspace")
    .reduce((a, b) => (rank(b.interval) > rank(a.interval) ? b : a), s);
  throw new DomainError(
    "forbidden",
    `Workspace budget exceeded (${broadest.interval}): the workspace's ${broadest.interval} budget cannot take this request`,
    metadata(broadest, requested, affordable),
  );
}

/**
 * The completion tokens a request asks for (its max_tokens, or the model's maximum, never above
 * the model's maximum) and what the prompt and those cost: the hold unless a limit caps it.
 */
export function worstCase(ask: HoldAsk): { wanted: number; worst: bigint } {
  const wanted =
    ask.requestedMaxTokens === null
      ? ask.modelMaxCompletionTokens
      : Math.min(ask.requestedMaxTokens, ask.modelMaxCompletionTokens);
  return { wanted, worst: costNano(ask.prices, ask.promptTokens, wanted) };
}

/**
 * Decides a hold against the room: the worst case (prompt + max_tokens, or the model's maximum
 * completion capped by what the limits have left) must fit under the key's limit and every budget,
 * counting settled spend and every other open hold. Refusals: 403 when a limit is already spent or
 * a workspace budget cannot take the request; 402 when the key's remaining limit cannot cover the
 * worst case. Each names scope, interval, limit, spent, reserved and resets_at in metadata.
 */
export function planHold(room: Room, ask: HoldAsk): HoldPlan {
  const scopes = [...(room.key ? [room.key] : []), ...room.budgets, ...(room.guardrails ?? [])];
  const { wanted, worst } = worstCase(ask);
  // The limits that cannot take this request (a refusal names the broadest budget among them):
  // spent, or too short for its worst case (for a request without max_tokens, which is capped
  // instead: too short for a single token).
  const failing = () =>
    scopes.filter(
      (s) =>
        s.spentNano >= s.limitNano ||
        (worst > left(s) && (ask.requestedMaxTokens !== null || affordableTokens(ask, left(s)) < 1)),
    );
  // A limit already spent is refused first, whatever the request's size.
  const firstSpent = scopes.find((s) => s.spentNano >= s.limitNano);
  if (firstSpent) refuse(firstSpent, failing(), wanted, 0);
  if (scopes.length === 0) return { amountNano: worst, maxTokens: wanted, capped: false };
  const binding = scopes.reduce((a, b) => (left(b) < left(a) ? b : a));
  const room0 = left(binding);
  if (worst <= room0) return { amountNano: worst, maxTokens: wanted, capped: false };
  const affordable = affordableTokens(ask, room0);
  if (ask.requestedMaxTokens !== null || affordable < 1) refuse(binding, failing(), wanted, affordable);
  return {
    amountNano: costNano(ask.prices, ask.promptTokens, affordable),
    maxTokens: affordable,
    capped: true,
  };
}
