import { useState } from "preact/hooks";
import { call, errorText } from "../api/client.ts";
import { setKey } from "../api/session.ts";
import { ErrorNote } from "../components/ui.tsx";

/** The key is checked with one management call before it is kept (sessionStorage only). */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await call("get", "/workspaces", { query: { limit: 1 } }, key.trim());
      setKey(key.trim());
      onSignedIn();
    } catch (err) {
      setError(`Sign-in failed: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="signin" tabIndex={-1}>
      <h1>Gatehouse</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label for="key">Management key</label>
        <input
          id="key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(e) => setValue(e.currentTarget.value)}
          aria-describedby="key-help"
        />
        <p id="key-help" class="help">
          Kept in this tab only (sessionStorage) and sent only to this server. Closing the tab or signing out
          forgets it.
        </p>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
