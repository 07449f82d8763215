import { useEffect, useState } from "preact/hooks";
import { API_BASE } from "../api/client.ts";
import { ErrorNote } from "../components/ui.tsx";
import { int, usd } from "../lib/format.ts";

interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  cost?: number;
}

/**
 * One streamed chat request to this server's POST /api/v1/chat/completions (OpenAI / SDK format,
 * server-sent events) with an ordinary API key the user pastes (keys are stored hashed, so the
 * dashboard cannot pick one for them). The key lives in this page's memory only.
 */
export function Playground() {
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
  const [prompt, setPrompt] = useState("Say hello in five words.");
  const [answer, setAnswer] = useState("");
  const [usage, setUsage] = useState<Usage | null>(null);
  const [generationId, setGenerationId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const send = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setAnswer("");
    setUsage(null);
    setGenerationId(null);
    setError(null);
    try {
      const res = await fetch(`${API_BASE}/chat/completions`, {
        method: "POST",
        credentials: "omit",
        headers: { authorization: `Bearer ${key.trim()}`, "content-type": "application/json" },
        body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: prompt }] }),
      });
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
        throw new Error(body?.error?.message ?? `HTTP ${res.status}`);
      }
      setGenerationId(res.headers.get("x-gatehouse-generation-id"));
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      let text = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += value;
        const events = buffer.split(/\r?\n\r?\n/);
        buffer = events.pop() ?? "";
        for (const ev of events) {
          for (const line of ev.split(/\r?\n/)) {
            if (!line.startsWith("data:")) continue;
            const data = line.slice(5).trim();
            if (data === "[DONE]") continue;
            const chunk = JSON.parse(data) as {
              choices?: { delta?: { content?: string | null } }[];
              usage?: Usage;
              error?: { message?: string };
            };
            if (chunk.error) throw new Error(chunk.error.message ?? "stream error");
            const piece = chunk.choices?.[0]?.delta?.content;
            if (piece) {
              text += piece;
              setAnswer(text);
            }
            if (chunk.usage) setUsage(chunk.usage);
          }
        }
      }
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="pg-title">
      <h1 id="pg-title">Playground</h1>
      <form onSubmit={(e) => void send(e)} class="playground">
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
          {busy ? "Streaming…" : "Send"}
        </button>
      </form>
      <ErrorNote error={error} />
      <h2>Answer</h2>
      <output id="pg-answer" class="answer" aria-live="polite">
        {answer || (busy ? "…" : "")}
      </output>
      {usage && (
        <p id="pg-usage">
          Tokens: {int(usage.prompt_tokens ?? 0)} prompt, {int(usage.completion_tokens ?? 0)} completion
          {usage.cost !== undefined ? `; cost ${usd(usage.cost)}` : ""}
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
    </section>
  );
}
