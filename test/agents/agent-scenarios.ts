import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * The coding-agent runs (test/agents/agent-rig.ts): each agent on a provider that speaks its API
 * natively and on one it is translated for.
 */
export interface AgentScenario {
  name: string;
  agent: "claude-code" | "codex";
  /** A model of the rig's providers file: `anthropic/…` (Anthropic), `local/…` (chat completions), `native/…` (Responses). */
  model: string;
  /** The API the agent calls, as a generation records it. */
  api: "messages" | "responses";
  /** What reaches the upstream. */
  upstreamPath: string;
}

export const AGENT_SCENARIOS: readonly AgentScenario[] = [
  {
    name: "claude-code-native",
    agent: "claude-code",
    model: "anthropic/agent",
    api: "messages",
    upstreamPath: "anthropic /v1/messages",
  },
  {
    name: "claude-code-translated",
    agent: "claude-code",
    model: "local/agent",
    api: "messages",
    upstreamPath: "openai /v1/chat/completions",
  },
  {
    name: "codex-native",
    agent: "codex",
    model: "native/agent",
    api: "responses",
    upstreamPath: "openai /v1/responses",
  },
  {
    name: "codex-translated",
    agent: "codex",
    model: "anthropic/agent",
    api: "responses",
    upstreamPath: "anthropic /v1/messages",
  },
  {
    name: "codex-chat",
    agent: "codex",
    model: "local/agent",
    api: "responses",
    upstreamPath: "openai /v1/chat/completions",
  },
];

/** What one run reports. */
export interface AgentRun {
  scenario: string;
  marker: string;
  exitCode: number | null;
  ms: number;
  stdoutTail: string;
  stderrTail: string;
  /** `<fake> <path>` of every request the upstreams received during the run. */
  upstream: string[];
  keyUsage: number | null;
}

/** The versions the recorded turns come from, and the ones the runs are made with. */
export const AGENT_PACKAGES = ["@anthropic-ai/claude-code@2.1.328", "@openai/codex@0.169.0"] as const;

/** Where the agents are installed: GATEHOUSE_AGENTS_DIR (a folder holding node_modules). */
export function agentPaths(dir = process.env.GATEHOUSE_AGENTS_DIR ?? "") {
  const modules = join(dir, "node_modules");
  const claudeCode = join(modules, "@anthropic-ai", "claude-code", "cli-wrapper.cjs");
  const codex = join(modules, "@openai", "codex", "bin", "codex.js");
  return { claudeCode, codex, installed: dir !== "" && existsSync(claudeCode) && existsSync(codex) };
}
