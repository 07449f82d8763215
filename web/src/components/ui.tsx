import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

/** Small shared pieces: an error line announced to screen readers, a copy button, a notice. */
export function ErrorNote({ error, id }: { error: string | null; id?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert" id={id}>
      {error}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        onClick={() =>
          void navigator.clipboard.writeText(text).then(
            () => setDone("Copied"),
            () => setDone("Copy failed: select the text and copy it by hand"),
          )
        }
      >
        {label}
      </button>
      <span class="copy-state" role="status">
        {done ?? ""}
      </span>
    </>
  );
}

export function Loading({ what }: { what: string }) {
  return <p aria-busy="true">Loading {what}…</p>;
}
