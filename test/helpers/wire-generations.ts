/**
 * A generation as `POST /activity/generations` takes it (the wire record): an OpenAI gpt-4o call
 * of 10 prompt and 5 completion tokens unless overridden. `id`, `api_key_hash` and `created_at`
 * are the test's to give; override what the test is about.
 */
export function wireGeneration(
  fields: { id: string; api_key_hash: string; created_at: string } & Record<string, unknown>,
): Record<string, unknown> {
  return {
    model: "openai/gpt-4o",
    provider: "OpenAI",
    tokens_prompt: 10,
    tokens_completion: 5,
    usage: 0.001,
    latency_ms: 100,
    ...fields,
  };
}
