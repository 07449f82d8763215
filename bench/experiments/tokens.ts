/**
 * The cost of counting a chat request's prompt tokens (src/gateway/tokens/count-tokens.ts), which
 * the gateway does before every forwarded request (the worst-case reservation) and after a
 * response without usage. Baseline, measured in the same run: JSON.parse of the same request body,
 * which the gateway does anyway, so the ratio says what counting adds to handling a request.
 *
 * The prompt: a system message and alternating user/assistant turns of word salad with numbers
 * and some code, about --tokens tokens in all (default 2000), a different one for every run (a
 * repeated prompt would be served by the tokenizer's merge cache and look several times cheaper). The first call (the encoder's lazy set-up) is
 * reported apart; then --runs timed calls of each, interleaved. The count cache (whole texts
 * counted before) is emptied before each of these calls, so they measure counting itself.
 *
 * Then a conversation, as clients send one: every request re-sends the history plus a new turn,
 * --turns turns (default 60, ~80 words each). Each turn's prompt is counted twice, interleaved: with
 * the count cache as the previous turns left it (what the gateway does), and with it emptied first
 * (the baseline: counting everything again, as before the cache). Ratios are per turn, same run.
 *
 *   npx tsx bench/experiments/tokens.ts [--tokens 2000] [--runs 2000] [--turns 60]
 */
import { countCache, countPromptTokens } from "../../src/gateway/tokens/count-tokens.js";

const args = process.argv.slice(2);
const arg = (name: string, def: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const targetTokens = arg("tokens", 2000);
const runs = arg("runs", 2000);
const turns = arg("turns", 60);

const WORDS = (
  "the gateway reserves worst case before forwards request then settles what upstream reports when " +
  "provider says nothing about usage tokens are counted here instead budget limit workspace key model " +
  "stream chunk answer latency cost price cache reasoning tool call weather Paris function return"
).split(" ");
let seed = 42;
const rand = (n: number): number => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
/** Varied text, so the tokenizer's merge cache does not make every run after the first free. */
function prose(words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++)
    out.push(rand(7) === 0 ? `${WORDS[rand(WORDS.length)]}_${rand(100000)}` : WORDS[rand(WORDS.length)]!);
  return out.join(" ") + ".";
}
const CODE = "function add(a: number, b: number): number {\n  return a + b; // 42\n}\n";

const t0 = performance.now();
const firstCount = countPromptTokens([{ role: "user", content: "Hello" }]);
const firstMs = performance.now() - t0;

type Msg = { role: string; content: string };
function makePrompt(): Msg[] {
  const messages: Msg[] = [{ role: "system", content: "You are a careful assistant." }];
  while (countPromptTokens(messages) < targetTokens) {
    const role = messages.length % 2 === 1 ? "user" : "assistant";
    messages.push({ role, content: prose(80) + (messages.length % 3 === 0 ? CODE : "") });
  }
  return messages;
}
// A fresh prompt per run (built outside the timing), as real traffic is.
const prompts = Array.from({ length: runs + 50 }, makePrompt);
const bodies = prompts.map((messages) => JSON.stringify({ model: "openai/gpt-4o", messages, stream: false }));
const messages = prompts[0]!;
const body = bodies[0]!;
const tokens = countPromptTokens(messages);

function time(fn: () => unknown): number {
  const s = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - s) / 1e6;
}
const count: number[] = [];
const parse: number[] = [];
for (let i = 0; i < runs + 50; i++) {
  countCache.clear();
  const c = time(() => countPromptTokens(prompts[i]!));
  const p = time(() => JSON.parse(bodies[i]!));
  if (i >= 50) {
    count.push(c);
    parse.push(p);
  }
}
const pct = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;
const fmt = (ms: number): string => `${(ms * 1000).toFixed(1)} µs`;

console.log(`first call (encoder set-up): ${firstMs.toFixed(1)} ms (${firstCount} tokens)`);
console.log(`prompt: ${messages.length} messages, ${tokens} tokens, ${body.length} bytes; ${runs} runs`);
const line = (xs: number[]): string =>
  [0.5, 0.9, 0.99].map((q) => `p${q * 100} ${fmt(pct(xs, q))}`).join("  ");
console.log(`countPromptTokens   ${line(count)}`);
console.log(`JSON.parse (base)   ${line(parse)}`);
console.log(`ratio count/parse   p50 ${(pct(count, 0.5) / pct(parse, 0.5)).toFixed(1)}×`);
console.log(`throughput: ${Math.round(1000 / pct(count, 0.5))} counts/s on one core`);

// A conversation: each turn re-sends the history. Cached (as served) against emptied (baseline).
const history: Msg[] = [{ role: "system", content: "You are a careful assistant." }];
const cached: number[] = [];
const cold: number[] = [];
let lastTokens = 0;
countCache.clear();
for (let t = 0; t < turns; t++) {
  history.push({ role: history.length % 2 === 1 ? "user" : "assistant", content: prose(80) });
  const prompt = history.slice();
  // The cache as the earlier turns left it: measure that first, then the same prompt from empty
  // (which leaves the cache as the served count would have: every text it counted whole).
  cached.push(time(() => (lastTokens = countPromptTokens(prompt))));
  countCache.clear();
  let again = 0;
  cold.push(time(() => (again = countPromptTokens(prompt))));
  if (again !== lastTokens) throw new Error("the cache changed a count");
}
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
console.log(`\nconversation: ${turns} turns, last prompt ${history.length} messages, ${lastTokens} tokens`);
console.log(`per turn, cache as served   ${line(cached)}  total ${sum(cached).toFixed(1)} ms`);
console.log(`per turn, cache emptied     ${line(cold)}  total ${sum(cold).toFixed(1)} ms`);
console.log(`ratio served/emptied        total ${((sum(cached) / sum(cold)) * 100).toFixed(1)} %`);
