import { useEffect, useRef, useState } from "preact/hooks";
import { capabilities } from "../api/capabilities.ts";
import { call, errorText } from "../api/client.ts";
import { governingGuardrails, loadGuardrailIndex, type GuardrailIndex } from "../api/guardrails.ts";
import { keysOf } from "../api/keys.ts";
import { allWorkspaces } from "../api/workspaces.ts";
import type { Key, Workspace } from "../api/types.ts";
import {
  CheckField,
  ConfirmButton,
  FormError,
  InputField,
  SelectField,
  ToggleButton,
  useForm,
  WorkspaceField,
  type FormState,
} from "../components/form.tsx";
import { GovernedBy } from "../components/GuardrailLinks.tsx";
import { CopyButton, ErrorNote, Loading } from "../components/ui.tsx";
import { fromUtcInput, usd, utc, utcInputValue } from "../lib/format.ts";

type Reset = "daily" | "weekly" | "monthly";

/** BYOK usage in the key's current limit window (all-time when the limit never resets). */
const windowByok = (k: Key) =>
  k.limit_reset === "daily"
    ? k.byok_usage_daily
    : k.limit_reset === "weekly"
      ? k.byok_usage_weekly
      : k.limit_reset === "monthly"
        ? k.byok_usage_monthly
        : k.byok_usage;

/**
 * What counts against the key's limit in its current window (all-time when the limit never
 * resets): the usage, plus the BYOK usage when the key counts it (`include_byok_in_limit`), the
 * same sum the server subtracts for `limit_remaining`.
 */
export const windowUsage = (k: Key) =>
  (k.limit_reset === "daily"
    ? k.usage_daily
    : k.limit_reset === "weekly"
      ? k.usage_weekly
      : k.limit_reset === "monthly"
        ? k.usage_monthly
        : k.usage) + (k.include_byok_in_limit ? windowByok(k) : 0);

const isExpired = (k: Key, now = Date.now()) => k.expires_at !== null && Date.parse(k.expires_at) <= now;

export function Keys() {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [workspaces, setWorkspaces] = useState<Workspace[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  /** The guardrails and assignments, read once (null: none on this server, or not read yet). */
  const [guardrails, setGuardrails] = useState<GuardrailIndex | null>(null);

  /** "" = every workspace (GET /keys lists one workspace at a time). */
  const [shown, setShown] = useState("");

  const load = (list = workspaces, only = shown) =>
    keysOf(only ? [only] : list.map((w) => w.id)).then(setKeys, (e: unknown) => setError(errorText(e)));
  useEffect(() => {
    allWorkspaces().then(
      (all) => {
        setWorkspaces(all);
        void load(all);
      },
      (e: unknown) => setError(errorText(e)),
    );
    void capabilities().then((c) =>
      c.guardrails
        ? loadGuardrailIndex().then(setGuardrails, (e: unknown) => setError(errorText(e)))
        : undefined,
    );
  }, []);
  const columns = guardrails ? 8 : 7;
  const table = useRef<HTMLDivElement>(null);
  /**
   * A change from a row's buttons: reload, and say what happened (role="status"). After a delete
   * the row and its button are gone, so the focus goes to the table rather than the page's start.
   */
  const change = (done: string, send: () => Promise<unknown>, removesRow = false) => {
    setError(null);
    send().then(
      () => {
        setStatus(done);
        void load().then(() => removesRow && table.current?.focus());
      },
      (e: unknown) => setError(errorText(e)),
    );
  };

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
      <div class="row">
        <SelectField
          label="Show keys of"
          value={shown}
          onValue={(ws) => {
            setShown(ws);
            void load(workspaces, ws);
          }}
          options={[["", "every workspace"], ...workspaces.map((w) => [w.id, w.name] as const)]}
        />
      </div>
      <p class="sr-only" role="status">
        {status}
      </p>
      {!keys ? (
        <Loading what="keys" />
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Keys" ref={table}>
          <table class="stack">
            <caption>Keys ({keys.length})</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Label</th>
                <th scope="col">Workspace</th>
                <th scope="col">Usage / limit (current window)</th>
                <th scope="col">Expires</th>
                <th scope="col">State</th>
                {guardrails && <th scope="col">Guardrails</th>}
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <>
                  <tr key={k.hash}>
                    <th scope="row">{k.name}</th>
                    <td data-label="Label">
                      <code>{k.label}</code>
                    </td>
                    <td data-label="Workspace">{wsName(k.workspace_id)}</td>
                    <td data-label="Usage / limit">
                      <UsageBar k={k} />
                    </td>
                    <td data-label="Expires">{k.expires_at ? utc(k.expires_at) : "never"}</td>
                    <td data-label="State">
                      {k.disabled ? "Disabled" : isExpired(k) ? "Expired" : "Enabled"}
                    </td>
                    {guardrails && (
                      <td data-label="Guardrails">
                        <GovernedBy list={governingGuardrails(guardrails, k, workspaces)} />
                      </td>
                    )}
                    <td class="actions">
                      <button
                        type="button"
                        class="secondary"
                        aria-expanded={editing === k.hash}
                        aria-controls={`edit-${k.hash}`}
                        onClick={() => setEditing(editing === k.hash ? null : k.hash)}
                      >
                        Edit<span class="sr-only"> {k.name}</span>
                      </button>
                      <ToggleButton
                        enabled={!k.disabled}
                        what={k.name}
                        onToggle={(on) =>
                          change(`${k.name} ${on ? "enabled" : "disabled"}`, () =>
                            call("patch", "/keys/{hash}", {
                              path: { hash: k.hash },
                              body: { disabled: !on },
                            }),
                          )
                        }
                      />
                      <ConfirmButton
                        label="Delete"
                        what={k.name}
                        question={`Delete the key "${k.name}"? Requests with it will be refused at once; its past usage stays in analytics. This cannot be undone.`}
                        confirmLabel="Delete key"
                        onConfirm={() =>
                          change(
                            `${k.name} deleted`,
                            () => call("delete", "/keys/{hash}", { path: { hash: k.hash } }),
                            true,
                          )
                        }
                      />
                    </td>
                  </tr>
                  {editing === k.hash && (
                    <tr key={`${k.hash}-edit`} id={`edit-${k.hash}`}>
                      <td colSpan={columns}>
                        <EditKey
                          k={k}
                          onDone={(saved) => {
                            setEditing(null);
                            if (saved) setStatus(`${k.name} saved`);
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
      {k.include_byok_in_limit && <span class="muted"> (incl. {usd(windowByok(k))} BYOK)</span>}
    </span>
  );
}

interface Limits {
  limit: string;
  reset: string;
  byok: boolean;
}

/** Limit, reset and the BYOK flag: the same fields on create and edit. */
function LimitFields({
  value,
  onChange,
  form,
}: {
  value: Limits;
  onChange: (v: Limits) => void;
  form: FormState;
}) {
  return (
    <>
      <InputField
        label="Limit (USD, empty = none)"
        field="limit"
        form={form}
        type="number"
        min={0}
        step="any"
        value={value.limit}
        onValue={(limit) => onChange({ ...value, limit })}
      />
      <SelectField
        label="Limit resets"
        field="limit_reset"
        form={form}
        value={value.reset}
        onValue={(reset) => onChange({ ...value, reset })}
        options={[["", "never"], "daily", "weekly", "monthly"]}
      />
      <CheckField
        label="Count BYOK usage toward the limit"
        field="include_byok_in_limit"
        form={form}
        checked={value.byok}
        onValue={(byok) => onChange({ ...value, byok })}
      />
    </>
  );
}

const limitBody = (l: Limits) => ({
  limit: l.limit === "" ? null : Number(l.limit),
  limit_reset: (l.reset || null) as Reset | null,
  include_byok_in_limit: l.byok,
});

function ExpiryField({
  value,
  onValue,
  form,
}: {
  value: string;
  onValue: (v: string) => void;
  form: FormState;
}) {
  return (
    <InputField
      label="Expires (UTC)"
      hint="empty = never expires"
      field="expires_at"
      form={form}
      type="datetime-local"
      step="1"
      value={value}
      onValue={onValue}
    />
  );
}

function CreateKey({ workspaces, onCreated }: { workspaces: Workspace[]; onCreated: (key: string) => void }) {
  const [name, setName] = useState("");
  const [ws, setWs] = useState("");
  const [limits, setLimits] = useState<Limits>({ limit: "", reset: "", byok: false });
  const [expires, setExpires] = useState("");
  const form = useForm();
  const submit = form.submit(() =>
    call("post", "/keys", {
      body: {
        name,
        ...(ws ? { workspace_id: ws } : {}),
        ...limitBody(limits),
        expires_at: fromUtcInput(expires),
      },
    }).then((r) => {
      setName("");
      onCreated(r.key);
    }),
  );
  return (
    <details class="panel">
      <summary>Create a key</summary>
      <form onSubmit={submit} class="row" aria-label="New key">
        <InputField
          id="new-key-name"
          label="Name"
          field="name"
          form={form}
          required
          value={name}
          onValue={setName}
        />
        <WorkspaceField workspaces={workspaces} value={ws} onValue={setWs} form={form} />
        <LimitFields value={limits} onChange={setLimits} form={form} />
        <ExpiryField value={expires} onValue={setExpires} form={form} />
        <button type="submit" disabled={form.busy}>
          Create key
        </button>
        <FormError form={form} />
      </form>
    </details>
  );
}

function EditKey({ k, onDone }: { k: Key; onDone: (saved: boolean) => void }) {
  const [name, setName] = useState(k.name);
  const [limits, setLimits] = useState<Limits>({
    limit: k.limit === null ? "" : String(k.limit),
    reset: k.limit_reset ?? "",
    byok: k.include_byok_in_limit,
  });
  const stored = utcInputValue(k.expires_at);
  const [expires, setExpires] = useState(stored);
  const form = useForm();
  // The expiry is sent only when changed (Gatehouse's PATCH extension): re-sending a past expiry
  // of an expired key would be refused, and the input drops milliseconds.
  const submit = form.submit(
    () =>
      call("patch", "/keys/{hash}", {
        path: { hash: k.hash },
        body: {
          name,
          ...limitBody(limits),
          ...(expires !== stored ? { expires_at: fromUtcInput(expires) } : {}),
        },
      }),
    () => onDone(true),
  );
  return (
    <form onSubmit={submit} class="row" aria-label={`Edit ${k.name}`}>
      <InputField label="Name" field="name" form={form} required value={name} onValue={setName} />
      <LimitFields value={limits} onChange={setLimits} form={form} />
      <ExpiryField value={expires} onValue={setExpires} form={form} />
      <button type="submit" disabled={form.busy}>
        Save
      </button>
      <button type="button" class="secondary" onClick={() => onDone(false)}>
        Cancel
      </button>
      <FormError form={form} />
    </form>
  );
}
