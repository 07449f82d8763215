import { useEffect, useState } from "preact/hooks";
import { call, errorText } from "../api/client.ts";
import type { Key, Workspace } from "../api/types.ts";
import { CopyButton, ErrorNote, Loading } from "../components/ui.tsx";
import { usd, utc } from "../lib/format.ts";

type Reset = "daily" | "weekly" | "monthly";

/** Usage in the key's current limit window (all-time when the limit never resets). */
export const windowUsage = (k: Key) =>
  k.limit_reset === "daily"
    ? k.usage_daily
    : k.limit_reset === "weekly"
      ? k.usage_weekly
      : k.limit_reset === "monthly"
        ? k.usage_monthly
        : k.usage;

export function Keys() {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [workspaces, setWorkspaces] = useState<Workspace[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);

  const load = () =>
    call("get", "/keys", { query: { include_disabled: true } }).then(
      (r) => setKeys(r.data),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
    void call("get", "/workspaces", { query: { limit: 100 } }).then((r) => setWorkspaces(r.data));
  }, []);

  const wsName = (id: string) => workspaces.find((w) => w.id === id)?.name ?? id;

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <CreateKey
        workspaces={workspaces}
        onCreated={(key) => {
          setCreated(key);
          void load();
        }}
      />
      {created && (
        <div class="once" role="status" aria-live="polite">
          <p>
            <strong>New key, shown only this once.</strong> Copy it now:
          </p>
          <p>
            <code id="new-key">{created}</code> <CopyButton text={created} label="Copy key" />{" "}
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              Done
            </button>
          </p>
        </div>
      )}
      <ErrorNote error={error} />
      {!keys ? (
        <Loading what="keys" />
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Keys">
          <table>
            <caption>Keys ({keys.length})</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Label</th>
                <th scope="col">Workspace</th>
                <th scope="col">Usage / limit (current window)</th>
                <th scope="col">Expires</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <>
                  <tr key={k.hash}>
                    <th scope="row">{k.name}</th>
                    <td>
                      <code>{k.label}</code>
                    </td>
                    <td>{wsName(k.workspace_id)}</td>
                    <td>
                      <UsageBar k={k} />
                    </td>
                    <td>{utc(k.expires_at)}</td>
                    <td>{k.disabled ? "Disabled" : "Enabled"}</td>
                    <td class="actions">
                      <button
                        type="button"
                        class="secondary"
                        aria-expanded={editing === k.hash}
                        onClick={() => setEditing(editing === k.hash ? null : k.hash)}
                      >
                        Edit<span class="sr-only"> {k.name}</span>
                      </button>
                      <button
                        type="button"
                        class="secondary"
                        onClick={() =>
                          void call("patch", "/keys/{hash}", {
                            path: { hash: k.hash },
                            body: { disabled: !k.disabled },
                          }).then(load, (e: unknown) => setError(errorText(e)))
                        }
                      >
                        {k.disabled ? "Enable" : "Disable"}
                        <span class="sr-only"> {k.name}</span>
                      </button>
                      <button
                        type="button"
                        class="danger"
                        onClick={() => {
                          if (!confirm(`Delete the key "${k.name}"? Requests with it will be refused.`))
                            return;
                          void call("delete", "/keys/{hash}", { path: { hash: k.hash } }).then(
                            load,
                            (e: unknown) => setError(errorText(e)),
                          );
                        }}
                      >
                        Delete<span class="sr-only"> {k.name}</span>
                      </button>
                    </td>
                  </tr>
                  {editing === k.hash && (
                    <tr key={`${k.hash}-edit`}>
                      <td colSpan={7}>
                        <EditKey
                          k={k}
                          onDone={() => {
                            setEditing(null);
                            void load();
                          }}
                        />
                      </td>
                    </tr>
                  )}
                </>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function UsageBar({ k }: { k: Key }) {
  const used = windowUsage(k);
  if (k.limit === null) return <span>{usd(used)} (no limit)</span>;
  const ratio = k.limit > 0 ? Math.min(1, used / k.limit) : 1;
  return (
    <span class="usage">
      <meter min={0} max={1} value={ratio} high={0.8} aria-label={`${k.name} usage of limit`} /> {usd(used)} /{" "}
      {usd(k.limit)} {k.limit_reset ?? "total"}
    </span>
  );
}

function LimitFields({
  prefix,
  limit,
  reset,
  byok,
  onChange,
}: {
  prefix: string;
  limit: string;
  reset: string;
  byok: boolean;
  onChange: (p: { limit?: string; reset?: string; byok?: boolean }) => void;
}) {
  return (
    <>
      <label>
        Limit (USD, empty = none)
        <input
          id={`${prefix}-limit`}
          type="number"
          min={0}
          step="0.01"
          value={limit}
          onInput={(e) => onChange({ limit: e.currentTarget.value })}
        />
      </label>
      <label>
        Limit resets
        <select value={reset} onChange={(e) => onChange({ reset: e.currentTarget.value })}>
          <option value="">never</option>
          <option value="daily">daily</option>
          <option value="weekly">weekly</option>
          <option value="monthly">monthly</option>
        </select>
      </label>
      <label class="check">
        <input type="checkbox" checked={byok} onChange={(e) => onChange({ byok: e.currentTarget.checked })} />{" "}
        Count BYOK usage toward the limit
      </label>
    </>
  );
}

function CreateKey({ workspaces, onCreated }: { workspaces: Workspace[]; onCreated: (key: string) => void }) {
  const [name, setName] = useState("");
  const [ws, setWs] = useState("");
  const [limits, setLimits] = useState({ limit: "", reset: "", byok: false });
  const [expires, setExpires] = useState("");
  const [error, setError] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    call("post", "/keys", {
      body: {
        name,
        ...(ws ? { workspace_id: ws } : {}),
        limit: limits.limit === "" ? null : Number(limits.limit),
        limit_reset: (limits.reset || null) as Reset | null,
        include_byok_in_limit: limits.byok,
        expires_at: expires ? `${expires}:00Z` : null,
      },
    }).then(
      (r) => {
        setName("");
        onCreated(r.key);
      },
      (err: unknown) => setError(errorText(err)),
    );
  };
  return (
    <details class="panel">
      <summary>Create a key</summary>
      <form onSubmit={submit} class="row">
        <label>
          Name
          <input id="new-key-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Workspace
          <select value={ws} onChange={(e) => setWs(e.currentTarget.value)}>
            <option value="">(default workspace)</option>
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
        <LimitFields prefix="new" {...limits} onChange={(p) => setLimits({ ...limits, ...p })} />
        <label>
          Expires (UTC, optional)
          <input type="datetime-local" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
        </label>
        <button type="submit">Create key</button>
        <ErrorNote error={error} />
      </form>
    </details>
  );
}

function EditKey({ k, onDone }: { k: Key; onDone: () => void }) {
  const [name, setName] = useState(k.name);
  const [limits, setLimits] = useState({
    limit: k.limit === null ? "" : String(k.limit),
    reset: k.limit_reset ?? "",
    byok: k.include_byok_in_limit,
  });
  const [error, setError] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    call("patch", "/keys/{hash}", {
      path: { hash: k.hash },
      body: {
        name,
        limit: limits.limit === "" ? null : Number(limits.limit),
        limit_reset: (limits.reset || null) as Reset | null,
        include_byok_in_limit: limits.byok,
      },
    }).then(onDone, (err: unknown) => setError(errorText(err)));
  };
  return (
    <form onSubmit={submit} class="row" aria-label={`Edit ${k.name}`}>
      <label>
        Name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <LimitFields
        prefix={`edit-${k.hash.slice(0, 8)}`}
        {...limits}
        onChange={(p) => setLimits({ ...limits, ...p })}
      />
      <p class="help">The expiry is set when a key is created; the API does not change it afterwards.</p>
      <button type="submit">Save</button>
      <button type="button" class="secondary" onClick={onDone}>
        Cancel
      </button>
      <ErrorNote error={error} />
    </form>
  );
}
