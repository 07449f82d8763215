import { useEffect, useState } from "preact/hooks";
import type { Capabilities } from "../api/capabilities.ts";
import { API_BASE } from "../api/client.ts";
import { ErrorNote } from "../components/ui.tsx";
import { int, usd } from "../lib/format.ts";
import { SURFACES, send } from "../lib/playground/send.ts";
import {
  NO_ANSWER,
  StreamFailed,
  type Answer,
  type PlaygroundApi,
  type Turn,
} from "../lib/playground/surface.ts";

/** The surfaces this server has, in the order the Playground offers them. */
export const playgroundApis = (c: Capabilities): PlaygroundApi[] =>
  (
    [
      ["chat", c.chatCompletions],
      ["responses", c.responses],
      ["messages", c.messages],
    ] as const
  )
    .filter(([, has]) => has)
    .map(([api]) => api);

/** What was sent, for the line under the answer. */
interface Sent {
  api: PlaygroundApi;
  stream: boolean;
}

/**
 * A conversation sent to this server through the API surface of the user's choice (chat
 * completions, Responses or Messages), streamed or not, with an ordinary API key the user pastes
 * (keys are stored hashed, so the dashboard cannot pick one for them). The key lives in this
 * page's memory only. Each surface builds its own request and reads its own answer
 * (lib/playground/); the page shows the answer, its usage and cost the same way for all.
 */
export function Playground({ apis }: { apis: PlaygroundApi[] }) {
  const [key, setKey] = useState("");
  const [model, setModel] = useState("");
  const [models, setModels] = useState<string[]>([]);

  // What this install routes to (GET /models is public); the first one is the default choice.
  useEffect(() => {
    void fetch(`${API_BASE}/models`, { credentials: "omit" })
      .then((r) => (r.ok ? (r.json() as Promise<{ data: { id: string }[] }>) : { data: [] }))
      .then(({ data }) => {
        const ids = data.map((m) => m.id);
        setModels(ids);
        setModel((current) => current || (ids[0] ?? ""));
      })
      .catch(() => undefined);
  }, []);
  const [api, setApi] = useState<PlaygroundApi>(apis[0] ?? "chat");
  const [stream, setStream] = useState(true);
  const [system, setSystem] = useState("");
  const [history, setHistory] = useState<Turn[]>([]);
  const [prompt, setPrompt] = useState("Say hello in five words.");
  const [answer, setAnswer] = useState<Answer>(NO_ANSWER);
  const [sent, setSent] = useState<Sent | null>(null);
  const [generationId, setGenerationId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setAnswer(NO_ANSWER);
    setSent({ api, stream });
    setGenerationId(null);
    setError(null);
    try {
      const r = await send(
        SURFACES[api],
        { system: system.trim(), turns: [...history, { role: "user", text: prompt }] },
        { base: API_BASE, key: key.trim(), model, stream, onUpdate: setAnswer },
      );
      setAnswer(r.answer);
      setGenerationId(r.generationId);
    } catch (err) {
      // A stream that failed after it opened: what came, and what was charged for it, stays shown.
      if (err instanceof StreamFailed) setAnswer(err.answer);
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  /** The prompt and its answer become turns of the conversation; the next message follows them. */
  const keepTurn = () => {
    setHistory([...history, { role: "user", text: prompt }, { role: "assistant", text: answer.text }]);
    setPrompt("");
    setAnswer(NO_ANSWER);
    setSent(null);
    setGenerationId(null);
  };

  const { usage } = answer;
  return (
    <section aria-labelledby="pg-title">
      <h1 id="pg-title">Playground</h1>
      <form onSubmit={(e) => void submit(e)} class="playground">
        <label>
          API key (an ordinary key; kept in this page only)
          <input
            id="pg-key"
            type="password"
            autoComplete="off"
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </label>
        <div class="row">
          <label>
            API
            <select id="pg-api" value={api} onChange={(e) => setApi(e.currentTarget.value as PlaygroundApi)}>
              {apis.map((a) => (
                <option key={a} value={a}>
                  {SURFACES[a].label} (POST /api/v1{SURFACES[a].path})
                </option>
              ))}
            </select>
          </label>
          <label>
            Model
            <input
              id="pg-model"
              required
              list="pg-models"
              value={model}
              onInput={(e) => setModel(e.currentTarget.value)}
            />
            <datalist id="pg-models">
              {models.map((id) => (
                <option key={id} value={id} />
              ))}
            </datalist>
          </label>
          <label class="check">
            <input
              id="pg-stream"
              type="checkbox"
              checked={stream}
              onChange={(e) => setStream(e.currentTarget.checked)}
            />
            Stream the answer
          </label>
        </div>
        <label>
          Instructions (optional; the system prompt)
          <textarea
            id="pg-system"
            rows={2}
            value={system}
            onInput={(e) => setSystem(e.currentTarget.value)}
          />
        </label>
        {history.length > 0 && (
          <div>
            <h2 id="pg-history-title">Conversation so far</h2>
            <ol id="pg-history" class="conversation" aria-labelledby="pg-history-title">
              {history.map((t, i) => (
                <li key={i} data-role={t.role}>
                  <strong>{t.role === "user" ? "You" : "Model"}:</strong> {t.text}
                </li>
              ))}
            </ol>
            <button type="button" class="secondary" onClick={() => setHistory([])} disabled={busy}>
              New conversation
            </button>
          </div>
        )}
        <label>
          Message
          <textarea
            id="pg-prompt"
            rows={4}
            required
            value={prompt}
            onInput={(e) => setPrompt(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? (stream ? "Streaming…" : "Waiting…") : "Send"}
        </button>
      </form>
      <ErrorNote error={error} />
      <h2>Answer</h2>
      <output id="pg-answer" class="answer" aria-live="polite">
        {answer.text || (busy ? "…" : "")}
      </output>
      {sent && !busy && (
        <p id="pg-via">
          Sent through {SURFACES[sent.api].label} (POST /api/v1{SURFACES[sent.api].path}),{" "}
          {sent.stream ? "streamed" : "as one answer"}.
        </p>
      )}
      {usage && (
        <p id="pg-usage">
          Tokens: {int(usage.prompt)} prompt, {int(usage.completion)} completion
          {usage.cost !== null ? `; cost ${usd(usage.cost)}` : ""}
          {generationId && (
            <>
              ; generation{" "}
              <a id="pg-generation" href={`/generations?id=${encodeURIComponent(generationId)}`}>
                {generationId}
              </a>
            </>
          )}
        </p>
      )}
      {answer.done && !busy && !error && (
        <button type="button" class="secondary" onClick={keepTurn}>
          Continue the conversation
        </button>
      )}
    </section>
  );
}
