import { useEffect, useState } from "preact/hooks";
import { call, errorText } from "../api/client.ts";
import { ErrorNote } from "../components/ui.tsx";
import { int, num, usd, utc } from "../lib/format.ts";
import { navigate, useLocation } from "../lib/router.ts";

/**
 * One generation by its id (`GET /generation?id=`): what a support request starts from ("my
 * request gen-… failed"). The id is kept in the URL (`/generations?id=…`), so a lookup can be
 * shared. Prompts and completions are never stored, so there are none to show.
 */
type Generation = Record<string, unknown>;

const FIELDS: [key: string, label: string, show: (v: unknown) => string][] = [
  ["created_at", "Created", (v) => utc(typeof v === "string" ? v : null)],
  ["model", "Model", String],
  ["provider_name", "Provider", String],
  ["total_cost", "Cost", (v) => usd(Number(v))],
  ["is_byok", "BYOK", (v) => (v ? "yes" : "no")],
  ["tokens_prompt", "Prompt tokens", (v) => int(Number(v))],
  ["tokens_completion", "Completion tokens", (v) => int(Number(v))],
  ["native_tokens_cached", "Cached tokens", (v) => int(Number(v))],
  ["native_tokens_reasoning", "Reasoning tokens", (v) => int(Number(v))],
  ["latency", "Latency", (v) => `${num(Number(v))} ms`],
  ["generation_time", "Generation time", (v) => `${num(Number(v))} ms`],
  ["finish_reason", "Finish reason", String],
  ["streamed", "Streamed", (v) => (v ? "yes" : "no")],
  ["cancelled", "Cancelled", (v) => (v ? "yes" : "no")],
  ["api_type", "API", String],
  ["origin", "Origin", String],
  ["app_id", "App id", String],
  ["external_user", "External user", String],
  ["workspace_id", "Workspace", String],
  ["upstream_id", "Upstream id", String],
];

export function Generations() {
  const { search } = useLocation();
  const id = search.get("id") ?? "";
  const [draft, setDraft] = useState(id);
  const [found, setFound] = useState<Generation | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    setDraft(id);
    setFound(null);
    setError(null);
    if (!id) return;
    call("get", "/generation", { query: { id } }).then(
      (r: unknown) => setFound((r as { data: Generation }).data),
      (e: unknown) => setError(errorText(e)),
    );
  }, [id]);

  const attempts = Array.isArray(found?.provider_responses)
    ? (found.provider_responses as { status?: number; latency?: number; is_byok?: boolean }[])
    : [];
  return (
    <section aria-labelledby="gen-title">
      <h1 id="gen-title">Generations</h1>
      <form
        class="row"
        aria-label="Find a generation"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(`/generations?id=${encodeURIComponent(draft.trim())}`);
        }}
      >
        <label>
          Generation id
          <input
            id="gen-id"
            required
            autoComplete="off"
            placeholder="gen-…"
            value={draft}
            onInput={(e) => setDraft(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Find</button>
      </form>
      <ErrorNote error={error} />
      {found && (
        <article class="panel" aria-labelledby="gen-found">
          <h2 id="gen-found">
            <code>{String(found.id)}</code>
          </h2>
          <dl class="config">
            {FIELDS.filter(([k]) => found[k] !== null && found[k] !== undefined && found[k] !== "").map(
              ([k, label, show]) => (
                <div key={k}>
                  <dt>{label}</dt>
                  <dd data-field={k}>{show(found[k])}</dd>
                </div>
              ),
            )}
          </dl>
          {attempts.length > 0 && (
            <p>
              Provider attempts:{" "}
              {attempts
                .map(
                  (a, i) =>
                    `${i + 1}: HTTP ${a.status ?? "–"} in ${num(a.latency ?? 0)} ms${a.is_byok ? " (BYOK)" : ""}`,
                )
                .join("; ")}
            </p>
          )}
        </article>
      )}
    </section>
  );
}
