import { hashKey } from "../../src/lib/ids.js";
import type { TestApp } from "../helpers/app.js";

let seq = 0;

/** A valid wire record for the test app's management key; override what the test is about. */
export function wireRecord(t: TestApp, over: Record<string, unknown> = {}): Record<string, unknown> {
  seq += 1;
  return {
    id: `gen-${Date.now().toString(36)}-${seq}`,
    created_at: "2026-11-18T11:00:00Z",
    api_key_hash: hashKey(t.key),
    model: "openai/gpt-4o",
    provider: "OpenAI",
    tokens_prompt: 1000,
    tokens_completion: 200,
    usage: 0.25,
    latency_ms: 120,
    ...over,
  };
}

export const ingest = (t: TestApp, generations: unknown[], auth?: string | null) =>
  t.call({ method: "POST", url: "/api/v1/activity/generations", payload: { generations }, auth });

export const ndjson = (t: TestApp, body: string, auth?: string | null) =>
  t.call({
    method: "POST",
    url: "/api/v1/activity/generations",
    payload: body,
    headers: { "content-type": "application/x-ndjson" },
    auth,
  });

/** Rows of the activity store for the test organization. */
export async function activityRows(t: TestApp, where = "TRUE"): Promise<Record<string, unknown>[]> {
  return t.ctx.activity.query(
    {
      sql: `SELECT * FROM generations WHERE organization_id = $org AND ${where} ORDER BY id`,
      params: { org: t.organizationId },
    },
    { timeoutMs: 10_000 },
  );
}
