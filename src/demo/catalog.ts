/**
 * What `gatehouse demo` generates from: real model permaslugs with list prices (USD per million
 * tokens, as published by the providers in 2025), the providers that serve them, and a fictional
 * company ("Acme") with workspaces, keys, users and apps. Only the data lives here; the sampling
 * is in generate-records.ts.
 */
export interface ModelSpec {
  slug: string;
  /** USD per million prompt tokens, completion tokens, and cached prompt tokens (null: no caching). */
  input: number;
  output: number;
  cacheRead: number | null;
  providers: readonly (readonly [string, number])[];
  /** Share of requests with reasoning tokens (0: not a reasoning model). */
  reasoning: number;
  /** Completion tokens per second, and median time to first token (ms). */
  tokensPerSecond: number;
  latencyMs: number;
  /** Variants and their share of requests (`free` costs nothing; `thinking` always reasons). */
  variants: readonly (readonly [string, number])[];
}

export const MODELS: readonly ModelSpec[] = [
  {
    slug: "openai/gpt-4o",
    input: 2.5,
    output: 10,
    cacheRead: 1.25,
    providers: [
      ["OpenAI", 80],
      ["Azure", 20],
    ],
    reasoning: 0,
    tokensPerSecond: 90,
    latencyMs: 450,
    variants: [],
  },
  {
    slug: "openai/gpt-4o-mini",
    input: 0.15,
    output: 0.6,
    cacheRead: 0.075,
    providers: [
      ["OpenAI", 85],
      ["Azure", 15],
    ],
    reasoning: 0,
    tokensPerSecond: 110,
    latencyMs: 350,
    variants: [],
  },
  {
    slug: "openai/o4-mini",
    input: 1.1,
    output: 4.4,
    cacheRead: 0.275,
    providers: [["OpenAI", 100]],
    reasoning: 1,
    tokensPerSecond: 120,
    latencyMs: 2500,
    variants: [],
  },
  {
    slug: "anthropic/claude-sonnet-4",
    input: 3,
    output: 15,
    cacheRead: 0.3,
    providers: [
      ["Anthropic", 60],
      ["Amazon Bedrock", 25],
      ["Google Vertex", 15],
    ],
    reasoning: 0,
    tokensPerSecond: 65,
    latencyMs: 1200,
    variants: [["thinking", 0.15]],
  },
  {
    slug: "anthropic/claude-3.5-haiku",
    input: 0.8,
    output: 4,
    cacheRead: 0.08,
    providers: [
      ["Anthropic", 70],
      ["Amazon Bedrock", 30],
    ],
    reasoning: 0,
    tokensPerSecond: 100,
    latencyMs: 600,
    variants: [],
  },
  {
    slug: "google/gemini-2.5-pro",
    input: 1.25,
    output: 10,
    cacheRead: 0.31,
    providers: [
      ["Google Vertex", 55],
      ["Google AI Studio", 45],
    ],
    reasoning: 1,
    tokensPerSecond: 110,
    latencyMs: 2500,
    variants: [],
  },
  {
    slug: "google/gemini-2.5-flash",
    input: 0.3,
    output: 2.5,
    cacheRead: 0.075,
    providers: [
      ["Google AI Studio", 60],
      ["Google Vertex", 40],
    ],
    reasoning: 0.3,
    tokensPerSecond: 220,
    latencyMs: 500,
    variants: [],
  },
  {
    slug: "meta-llama/llama-3.3-70b-instruct",
    input: 0.13,
    output: 0.4,
    cacheRead: null,
    providers: [
      ["DeepInfra", 30],
      ["Together", 20],
      ["Groq", 20],
      ["Fireworks", 15],
      ["Lambda", 15],
    ],
    reasoning: 0,
    tokensPerSecond: 80,
    latencyMs: 400,
    variants: [
      ["free", 0.08],
      ["nitro", 0.05],
    ],
  },
  {
    slug: "deepseek/deepseek-chat",
    input: 0.27,
    output: 1.1,
    cacheRead: 0.07,
    providers: [
      ["DeepSeek", 50],
      ["DeepInfra", 25],
      ["Fireworks", 25],
    ],
    reasoning: 0,
    tokensPerSecond: 30,
    latencyMs: 1500,
    variants: [["free", 0.06]],
  },
  {
    slug: "deepseek/deepseek-r1",
    input: 0.55,
    output: 2.19,
    cacheRead: 0.14,
    providers: [
      ["DeepSeek", 40],
      ["Together", 30],
      ["Fireworks", 30],
    ],
    reasoning: 1,
    tokensPerSecond: 40,
    latencyMs: 4000,
    variants: [],
  },
  {
    slug: "mistralai/mistral-large",
    input: 2,
    output: 6,
    cacheRead: null,
    providers: [["Mistral", 100]],
    reasoning: 0,
    tokensPerSecond: 50,
    latencyMs: 500,
    variants: [],
  },
  {
    slug: "mistralai/mistral-small-3.2-24b-instruct",
    input: 0.05,
    output: 0.1,
    cacheRead: null,
    providers: [
      ["Mistral", 70],
      ["DeepInfra", 30],
    ],
    reasoning: 0,
    tokensPerSecond: 140,
    latencyMs: 300,
    variants: [],
  },
  {
    slug: "qwen/qwen3-235b-a22b",
    input: 0.13,
    output: 0.6,
    cacheRead: null,
    providers: [
      ["DeepInfra", 40],
      ["Together", 30],
      ["Fireworks", 30],
    ],
    reasoning: 0.4,
    tokensPerSecond: 60,
    latencyMs: 800,
    variants: [["free", 0.1]],
  },
];

/** Time to first token of providers known for speed, relative to the model's median. */
export const FAST_PROVIDERS: Readonly<Record<string, number>> = { Groq: 0.35, Fireworks: 0.8 };
/** Throughput of fast providers relative to the model's. */
export const FAST_THROUGHPUT: Readonly<Record<string, number>> = { Groq: 3.5, Fireworks: 1.4 };

export interface AppSpec {
  id: number;
  title: string;
  origin: string;
  /** Median prompt and completion tokens (log-normal). */
  prompt: number;
  completion: number;
  /** Share of streamed requests. */
  streamed: number;
  topics: readonly (readonly [string, number])[];
}

export const APPS: readonly AppSpec[] = [
  {
    id: 1,
    title: "Acme Chat",
    origin: "https://chat.acme.example",
    prompt: 1800,
    completion: 350,
    streamed: 0.95,
    topics: [
      ["writing", 30],
      ["coding", 20],
      ["research", 20],
      ["translation", 10],
      ["other", 20],
    ],
  },
  {
    id: 2,
    title: "Docs Assistant",
    origin: "https://docs.acme.example",
    prompt: 6000,
    completion: 400,
    streamed: 0.9,
    topics: [
      ["research", 40],
      ["coding", 40],
      ["other", 20],
    ],
  },
  {
    id: 3,
    title: "Code Review Bot",
    origin: "api",
    prompt: 12000,
    completion: 600,
    streamed: 0.1,
    topics: [["coding", 100]],
  },
  {
    id: 4,
    title: "Support Copilot",
    origin: "https://support.acme.example",
    prompt: 2500,
    completion: 250,
    streamed: 0.8,
    topics: [
      ["customer_support", 80],
      ["translation", 10],
      ["other", 10],
    ],
  },
  {
    id: 5,
    title: "Eval Harness",
    origin: "api",
    prompt: 3000,
    completion: 500,
    streamed: 0,
    topics: [
      ["data_analysis", 50],
      ["coding", 30],
      ["research", 20],
    ],
  },
  {
    id: 6,
    title: "Sales Email Writer",
    origin: "https://crm.acme.example",
    prompt: 800,
    completion: 300,
    streamed: 0.7,
    topics: [
      ["writing", 90],
      ["other", 10],
    ],
  },
];

/** Requests without an app (scripts, notebooks): their own token profile. */
export const NO_APP: Omit<AppSpec, "id" | "title"> = {
  origin: "api",
  prompt: 1500,
  completion: 400,
  streamed: 0.3,
  topics: [
    ["coding", 40],
    ["data_analysis", 30],
    ["other", 30],
  ],
};

export interface UserSpec {
  id: string;
  name: string;
  email: string;
}

const PEOPLE = [
  "Alice Martin",
  "Bruno Costa",
  "Chen Wei",
  "Divya Raman",
  "Emma Schulz",
  "Farid Haddad",
  "Grace Kim",
  "Hugo Lefebvre",
  "Ines Duarte",
  "Jonas Berg",
  "Keiko Tanaka",
  "Liam O'Brien",
  "Maya Cohen",
  "Noah Williams",
] as const;

/** Identity-provider style user ids (`user_…`), stable across runs. */
export const USERS: readonly UserSpec[] = PEOPLE.map((name, i) => {
  const [first = "", last = ""] = name.toLowerCase().replace(/'/g, "").split(" ");
  return {
    id: `user_2${(0x5eed0000 + i * 7919).toString(36)}acme`,
    name,
    email: `${first}.${last}@acme.example`,
  };
});

export interface KeySpec {
  name: string;
  /** Index in USERS of the key's creator. */
  creator: number;
  /** Share of the workspace's traffic. */
  weight: number;
  /** Optional monthly spending limit (USD). */
  monthlyLimit?: number;
}

export interface WorkspaceSpec {
  /** null: the organization's default workspace (already there). */
  slug: string | null;
  name: string;
  description: string;
  /** Share of the organization's traffic. */
  weight: number;
  /** Share of requests served with the organization's own provider keys. */
  byok: number;
  /** Share of requests with a data-logging discount (usage_data < 0). */
  dataDiscount: number;
  keys: readonly KeySpec[];
  /** Indexes in USERS of the workspace's members. */
  users: readonly number[];
  /** App ids (null: no app) and models with their weights. */
  apps: readonly (readonly [number | null, number])[];
  models: readonly (readonly [string, number])[];
  /** Share of requests that carry an end-user id, and how many end users there are. */
  externalUsers: number;
  externalUserCount: number;
}

export const WORKSPACES: readonly WorkspaceSpec[] = [
  {
    slug: null,
    name: "Default",
    description: "",
    weight: 10,
    byok: 0.1,
    dataDiscount: 0,
    keys: [
      { name: "Prototyping", creator: 0, weight: 60 },
      { name: "CI smoke tests", creator: 9, weight: 40 },
    ],
    users: [0, 9, 13],
    apps: [
      [3, 40],
      [null, 60],
    ],
    models: [
      ["openai/gpt-4o-mini", 30],
      ["anthropic/claude-sonnet-4", 20],
      ["google/gemini-2.5-flash", 20],
      ["meta-llama/llama-3.3-70b-instruct", 15],
      ["deepseek/deepseek-chat", 15],
    ],
    externalUsers: 0,
    externalUserCount: 0,
  },
  {
    slug: "production",
    name: "Production",
    description: "Customer-facing features",
    weight: 50,
    byok: 0.08,
    dataDiscount: 0,
    keys: [
      { name: "prod-api", creator: 1, weight: 50 },
      { name: "prod-chat-frontend", creator: 4, weight: 35 },
      { name: "prod-batch-jobs", creator: 1, weight: 15, monthlyLimit: 2500 },
    ],
    users: [1, 4, 6, 10],
    apps: [
      [1, 45],
      [2, 30],
      [6, 15],
      [null, 10],
    ],
    models: [
      ["openai/gpt-4o-mini", 25],
      ["anthropic/claude-sonnet-4", 20],
      ["openai/gpt-4o", 15],
      ["google/gemini-2.5-flash", 15],
      ["meta-llama/llama-3.3-70b-instruct", 10],
      ["deepseek/deepseek-chat", 10],
      ["mistralai/mistral-large", 5],
    ],
    externalUsers: 0.4,
    externalUserCount: 5000,
  },
  {
    slug: "research",
    name: "Research",
    description: "Evaluations and experiments",
    weight: 20,
    byok: 0.45,
    dataDiscount: 0,
    keys: [
      { name: "research-evals", creator: 2, weight: 70 },
      { name: "research-notebooks", creator: 3, weight: 30, monthlyLimit: 500 },
    ],
    users: [2, 3, 7, 11],
    apps: [
      [5, 60],
      [3, 10],
      [null, 30],
    ],
    models: [
      ["anthropic/claude-sonnet-4", 20],
      ["google/gemini-2.5-pro", 20],
      ["openai/o4-mini", 15],
      ["deepseek/deepseek-r1", 15],
      ["qwen/qwen3-235b-a22b", 10],
      ["meta-llama/llama-3.3-70b-instruct", 10],
      ["openai/gpt-4o", 10],
    ],
    externalUsers: 0,
    externalUserCount: 0,
  },
  {
    slug: "support",
    name: "Customer support",
    description: "Support copilot and ticket triage",
    weight: 20,
    byok: 0.05,
    dataDiscount: 0.5,
    keys: [
      { name: "support-copilot", creator: 5, weight: 75 },
      { name: "support-triage", creator: 8, weight: 25 },
    ],
    users: [5, 8, 12],
    apps: [
      [4, 90],
      [null, 10],
    ],
    models: [
      ["openai/gpt-4o-mini", 40],
      ["anthropic/claude-3.5-haiku", 30],
      ["google/gemini-2.5-flash", 20],
      ["mistralai/mistral-small-3.2-24b-instruct", 10],
    ],
    externalUsers: 0.6,
    externalUserCount: 2000,
  },
];

export const COUNTRIES: readonly (readonly [string | null, number])[] = [
  ["US", 30],
  ["IN", 9],
  ["GB", 8],
  ["DE", 8],
  ["FR", 6],
  ["BR", 5],
  ["JP", 5],
  ["CA", 5],
  ["NL", 3],
  ["SG", 3],
  ["AU", 3],
  ["KR", 3],
  ["ES", 3],
  ["IT", 2],
  ["PL", 2],
  ["SE", 2],
  ["MX", 2],
  [null, 1],
];

/** Finish reasons of completed requests; null means the client cancelled. */
export const FINISH_REASONS: readonly (readonly [string | null, number])[] = [
  ["stop", 78],
  ["tool_calls", 11],
  ["length", 6],
  ["error", 2.5],
  ["content_filter", 0.7],
  [null, 1.8],
];

export const SENTIMENTS: readonly (readonly [string, number])[] = [
  ["positive", 35],
  ["neutral", 55],
  ["negative", 10],
];

/** Share of requests tagged by the demo classifier (`topic`, `sentiment`). */
export const CLASSIFIED_SHARE = 0.7;
/** Share of requests with web search results (5 results at $0.004 each). */
export const WEB_SEARCH_SHARE = 0.03;
export const WEB_SEARCH_USD = 0.02;
/** Share of requests whose prompt partly hit the provider's prompt cache. */
export const PROMPT_CACHE_SHARE = 0.35;
/** BYOK requests pay this share of the inference cost to the platform. */
export const BYOK_FEE = 0.05;
/** Data-logging discount on the inference cost. */
export const DATA_DISCOUNT = 0.01;
export const RESPONSE_CACHED_SHARE = 0.02;
export const GUARDRAIL_SHARE = 0.015;
/** Share of legacy records (before workspaces existed) among the default workspace's. */
export const LEGACY_SHARE = 0.05;

/** Relative traffic by UTC hour: a European morning bump and a larger American afternoon. */
export function hourWeight(hour: number): number {
  const bump = (center: number, width: number) => Math.exp(-0.5 * ((hour - center) / width) ** 2);
  return 0.25 + 0.6 * bump(9.5, 2) + 1.0 * bump(16, 3.5);
}

/** Weekends carry less than half of a weekday's traffic. */
export const WEEKEND_FACTOR = 0.42;
/** Daily growth of traffic over the period. */
export const DAILY_GROWTH = 0.012;
