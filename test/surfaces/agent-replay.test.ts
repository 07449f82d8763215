import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSurfaceRig, type SurfaceRig } from "./surface-fixtures.js";

/**
 * What two coding agents send over a whole tool-using turn (recorded from Claude Code 2.1.328 and
 * Codex CLI 0.169.0: test/unit/surfaces/*.json, prose redacted, structure as sent), replayed
 * through a listening Gatehouse with their own headers, on a native and a translated provider:
 * every request is served (200, a complete stream in the agent's shape), recorded with its API,
 * and what a translation left out is named in the header rather than refused.
 */
interface Recorded {
  turn: number;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}
const load = (name: string): Recorded[] =>
  JSON.parse(readFileSync(join(import.meta.dirname, "../unit/surfaces", name), "utf8")) as Recorded[];
const CLAUDE = load("claude-code-2.1.328-messages.json");
const CODEX = load("codex-0.169.0-responses.json");

let rig: SurfaceRig;
let key: string;
beforeAll(async () => {
  rig = await startSurfaceRig();
  key = await rig.key("agents");
});
afterAll(() => rig?.close());

async function replay(r: Recorded, model: string) {
  const headers = { ...r.headers, authorization: `Bearer ${key}` };
  const res = await fetch(`${rig.s.baseUrl.replace(/\/api\/v1$/, "")}${r.path}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ ...r.body, model }),
  });
  const text = await res.text();
  const events = text
    .split("\n\n")
    .filter((e) => e.includes("data: {"))
    .map((e) => ({
      event: /^event: (.*)$/m.exec(e)?.[1] ?? null,
      data: JSON.parse(/^data: (.*)$/m.exec(e)![1]!) as Record<string, unknown>,
    }));
  return { status: res.status, headers: res.headers, text, events };
}

describe("Claude Code's turn through /messages", () => {
  for (const [model, how] of [
    ["anthropic/ok", "native"],
    ["local/ok", "translated"],
  ] as const) {
    for (const r of CLAUDE) {
      it(`turn ${r.turn} on ${model} (${how}): a complete stream of named events`, async () => {
        const out = await replay(r, model);
        expect(out.status, out.text.slice(0, 300)).toBe(200);
        expect(out.events.every((e) => e.event !== null)).toBe(true);
        expect(out.events[0]!.event).toBe("message_start");
        expect(out.events.at(-1)!.event).toBe("message_stop");
        expect(out.events.some((e) => e.event === "message_delta")).toBe(true);
        const id = (out.events[0]!.data.message as { id: string }).id;
        expect(await rig.apiOf(id)).toBe("messages");
        if (how === "native") {
          // As sent, but the system-role message joins the top-level system (API 2023-06-01).
          const sent = rig.anthropic.requests.at(-1)!.body as {
            messages: { role: string }[];
            system: unknown[];
          };
          expect(sent.messages.some((m) => m.role === "system")).toBe(false);
          expect(sent.system.length).toBeGreaterThan((r.body.system as unknown[]).length);
          expect(JSON.stringify(sent)).toContain("cache_control");
          // Nothing was left out of a request forwarded as sent.
          expect(out.headers.get("x-gatehouse-left-out")).toBeNull();
        }
        if (how === "translated") {
          const left = out.headers.get("x-gatehouse-left-out") ?? "";
          for (const f of ["cache_control", "context_management", "output_config"]) expect(left).toContain(f);
        }
      });
    }
  }
});

describe("Codex's turn through /responses", () => {
  for (const r of CODEX) {
    it(`turn ${r.turn} on native/ok (forwarded as sent): web_search kept, no left-out header`, async () => {
      const out = await replay(r, "native/ok");
      expect(out.status, out.text.slice(0, 300)).toBe(200);
      expect(out.events.map((e) => e.data.type).at(-1)).toBe("response.completed");
      const sent = rig.openai.requests.at(-1)!;
      expect(sent.path).toBe("/v1/responses");
      expect((sent.body as { tools: { type: string }[] }).tools.some((t) => t.type === "web_search")).toBe(
        true,
      );
      expect(out.headers.get("x-gatehouse-left-out")).toBeNull();
    });
  }

  for (const model of ["local/ok", "anthropic/ok"]) {
    for (const r of CODEX) {
      it(`turn ${r.turn} on ${model}: the full event sequence, web_search left out and named`, async () => {
        const out = await replay(r, model);
        expect(out.status, out.text.slice(0, 300)).toBe(200);
        const types = out.events.map((e) => e.data.type);
        expect(types[0]).toBe("response.created");
        expect(types.at(-1)).toBe("response.completed");
        expect(out.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
        const seq = out.events.map((e) => e.data.sequence_number);
        expect(seq).toEqual(seq.map((_, i) => i));
        expect(out.headers.get("x-gatehouse-left-out")).toContain("web_search");
        const id = (out.events[0]!.data.response as { id: string }).id;
        expect(await rig.apiOf(id)).toBe("responses");
      });
    }
  }
});
