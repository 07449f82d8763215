import { useEffect, useRef, useState } from "preact/hooks";
import { call, errorText, type Answer } from "../api/client.ts";
import { keysOf } from "../api/keys.ts";
import type { Key, Workspace } from "../api/types.ts";
import { allWorkspaces } from "../api/workspaces.ts";
import {
  CheckField,
  ConfirmButton,
  FormError,
  InputField,
  ToggleButton,
  useForm,
  WorkspaceField,
} from "../components/form.tsx";
import { KeyAllowlist } from "../components/KeyAllowlist.tsx";
import { ErrorNote, Loading } from "../components/ui.tsx";
import { utc } from "../lib/format.ts";

/**
 * The organization's own provider credentials (`/byok`): listed masked (`label`), created,
 * edited (the credential is replaced only when a new one is typed), disabled, deleted. Routing
 * order and the flags are the gateway's (docs/gateway.md, "BYOK").
 */
type ByokKey = Answer<"/byok", "get">["data"][number];

/** A workspace's BYOK keys (GET /byok lists one workspace, the default one unless named; 100 a page). */
async function workspaceByok(workspaceId: string): Promise<ByokKey[]> {
  const all: ByokKey[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await call("get", "/byok", { query: { limit: 100, offset, workspace_id: workspaceId } });
    all.push(...page.data);
    if (page.data.length < 100 || all.length >= page.total_count) return all;
  }
}

/** Every BYOK key of the organization's workspaces, in the order the API lists them. */
async function allByok(workspaces: readonly Workspace[]): Promise<ByokKey[]> {
  return (await Promise.all(workspaces.map((w) => workspaceByok(w.id)))).flat();
}

const list = (v: string) =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
const listOrNull = (v: string) => (list(v).length ? list(v) : null);

export function Byok() {
  const [rows, setRows] = useState<ByokKey[] | null>(null);
  const [workspaces, setWorkspaces] = useState<Workspace[]>([]);
  const [keys, setKeys] = useState<Key[]>([]);
  const [providers, setProviders] = useState<string[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  const table = useRef<HTMLDivElement>(null);

  // The workspaces, read once: every listing of the keys asks each of them.
  const known = useRef<Promise<Workspace[]> | null>(null);
  const workspacesOnce = () => (known.current ??= allWorkspaces());
  const load = () =>
    workspacesOnce()
      .then(allByok)
      .then(setRows, (e: unknown) => setError(errorText(e)));
  useEffect(() => {
    void load();
    void workspacesOnce()
      .then(async (all) => {
        setWorkspaces(all);
        setKeys(await keysOf(all.map((w) => w.id)));
      })
      .catch((e: unknown) => setError(errorText(e)));
    // The providers this install routes to, as suggestions; the API names an unknown slug.
    // (Its answer has no schema in the OpenAPI document: read defensively.)
    void call("get", "/providers").then(
      (r: unknown) => setProviders(((r as { data?: { slug: string }[] }).data ?? []).map((p) => p.slug)),
      () => undefined,
    );
  }, []);

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
  const wsName = (id: string | null) => workspaces.find((w) => w.id === id)?.name ?? id ?? "–";
  const title = (b: ByokKey) => b.name ?? `${b.provider} ${b.label}`;

  return (
    <section aria-labelledby="byok-title">
      <h1 id="byok-title">Provider keys (BYOK)</h1>
      <p class="help">
        Your own provider credentials, used instead of the platform's for the workspace's requests (lower
        order first). They are stored encrypted and shown masked; BYOK spend counts toward a key's limit or a
        workspace's budgets only where that is switched on.
      </p>
      <datalist id="byok-providers">
        {providers.map((p) => (
          <option key={p} value={p} />
        ))}
      </datalist>
      <details class="panel">
        <summary>Add a provider key</summary>
        <ByokForm workspaces={workspaces} keys={keys} onSaved={() => void load()} />
      </details>
      <ErrorNote error={error} />
      <p class="sr-only" role="status">
        {status}
      </p>
      {!rows ? (
        <Loading what="provider keys" />
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Provider keys" ref={table}>
          <table class="stack">
            <caption>Provider keys ({rows.length})</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Provider</th>
                <th scope="col">Key</th>
                <th scope="col">Workspace</th>
                <th scope="col">Order</th>
                <th scope="col">Use</th>
                <th scope="col">Limited to</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colSpan={9}>No provider keys yet.</td>
                </tr>
              )}
              {rows.map((b) => (
                <>
                  <tr key={b.id}>
                    <th scope="row">{b.name ?? "(unnamed)"}</th>
                    <td data-label="Provider">{b.provider}</td>
                    <td data-label="Key">
                      <code>{b.label}</code>
                    </td>
                    <td data-label="Workspace">{wsName(b.workspace_id)}</td>
                    <td data-label="Order">{b.sort_order}</td>
                    <td data-label="Use">{useOf(b)}</td>
                    <td data-label="Limited to">{limitsOf(b)}</td>
                    <td data-label="State">
                      {b.disabled ? "Disabled" : "Enabled"}
                      <span class="muted"> · added {utc(b.created_at)}</span>
                    </td>
                    <td class="actions">
                      <button
                        type="button"
                        class="secondary"
                        aria-expanded={editing === b.id}
                        aria-controls={`byok-edit-${b.id}`}
                        onClick={() => setEditing(editing === b.id ? null : b.id)}
                      >
                        Edit<span class="sr-only"> {title(b)}</span>
                      </button>
                      <ToggleButton
                        enabled={!b.disabled}
                        what={title(b)}
                        onToggle={(on) =>
                          change(`${title(b)} ${on ? "enabled" : "disabled"}`, () =>
                            call("patch", "/byok/{id}", { path: { id: b.id }, body: { disabled: !on } }),
                          )
                        }
                      />
                      <ConfirmButton
                        label="Delete"
                        what={title(b)}
                        question={`Delete the ${b.provider} key "${title(b)}"? Requests stop using it at once. This cannot be undone.`}
                        confirmLabel="Delete provider key"
                        onConfirm={() =>
                          change(
                            `${title(b)} deleted`,
                            () => call("delete", "/byok/{id}", { path: { id: b.id } }),
                            true,
                          )
                        }
                      />
                    </td>
                  </tr>
                  {editing === b.id && (
                    <tr key={`${b.id}-edit`} id={`byok-edit-${b.id}`}>
                      <td colSpan={9}>
                        <ByokForm
                          existing={b}
                          workspaces={workspaces}
                          keys={keys}
                          onSaved={() => {
                            setEditing(null);
                            setStatus(`${title(b)} saved`);
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

function useOf(b: ByokKey): string {
  const parts = [
    b.is_fallback ? "fallback (after the platform's key)" : "first",
    b.is_byok_only || b.is_required ? "never the platform's key" : "",
    b.declared_zdr === true ? "zero data retention" : "",
  ].filter(Boolean);
  return parts.join(", ");
}

function limitsOf(b: ByokKey): string {
  const parts = [
    b.allowed_models?.length ? `models: ${b.allowed_models.join(", ")}` : "",
    b.allowed_api_key_hashes?.length ? `${b.allowed_api_key_hashes.length} API keys` : "",
    b.allowed_user_ids?.length ? `users: ${b.allowed_user_ids.join(", ")}` : "",
  ].filter(Boolean);
  return parts.length ? parts.join("; ") : "everything";
}

function ByokForm({
  existing,
  workspaces,
  keys,
  onSaved,
}: {
  existing?: ByokKey;
  workspaces: Workspace[];
  keys: Key[];
  onSaved: () => void;
}) {
  const [provider, setProvider] = useState(existing?.provider ?? "");
  const [secret, setSecret] = useState("");
  const [name, setName] = useState(existing?.name ?? "");
  const [ws, setWs] = useState("");
  const [order, setOrder] = useState(String(existing?.sort_order ?? 0));
  const [fallback, setFallback] = useState(existing?.is_fallback ?? false);
  const [byokOnly, setByokOnly] = useState(existing?.is_byok_only ?? false);
  const [required, setRequired] = useState(existing?.is_required ?? false);
  const [zdr, setZdr] = useState(existing?.declared_zdr ?? false);
  const [models, setModels] = useState((existing?.allowed_models ?? []).join(", "));
  const [users, setUsers] = useState((existing?.allowed_user_ids ?? []).join(", "));
  const [allow, setAllow] = useState<string[]>(existing?.allowed_api_key_hashes ?? []);
  const form = useForm();
  const prefix = existing ? `byok-${existing.id.slice(0, 8)}` : "byok-new";
  // Only the keys of the credential's workspace can use it ("" = the default workspace, listed first).
  const keysWorkspace = existing?.workspace_id ?? (ws || workspaces[0]?.id);

  const submit = form.submit(
    () => {
      const common = {
        name: name.trim() || null,
        sort_order: Number(order),
        is_fallback: fallback,
        is_byok_only: byokOnly,
        is_required: required,
        // null = not declared: sent only when the box changes it.
        ...(zdr !== Boolean(existing?.declared_zdr) ? { declared_zdr: zdr } : {}),
        allowed_models: listOrNull(models),
        allowed_user_ids: listOrNull(users),
        allowed_api_key_hashes: allow.length ? allow : null,
      };
      return existing
        ? call("patch", "/byok/{id}", {
            path: { id: existing.id },
            body: { ...common, ...(secret ? { key: secret } : {}) },
          })
        : call("post", "/byok", {
            body: { ...common, provider: provider.trim(), key: secret, ...(ws ? { workspace_id: ws } : {}) },
          });
    },
    () => {
      setSecret("");
      if (!existing) {
        setName("");
        setProvider("");
      }
      onSaved();
    },
  );

  return (
    <form
      onSubmit={submit}
      class="dest-form"
      aria-label={existing ? `Edit ${existing.name ?? existing.label}` : "New provider key"}
    >
      <div class="row">
        {existing ? (
          <p>
            {existing.provider} <code>{existing.label}</code>
          </p>
        ) : (
          <label for={`${prefix}-provider`}>
            Provider
            <input
              id={`${prefix}-provider`}
              list="byok-providers"
              required
              autoComplete="off"
              value={provider}
              aria-invalid={form.errorField === "provider" ? true : undefined}
              aria-describedby={form.errorField === "provider" ? form.errorId : undefined}
              onInput={(e) => setProvider(e.currentTarget.value)}
            />
          </label>
        )}
        <InputField
          id={`${prefix}-key`}
          label={existing ? "New provider key" : "Provider key"}
          hint={existing ? "empty = keep the stored one" : "stored encrypted, shown masked"}
          field="key"
          form={form}
          type="password"
          required={!existing}
          value={secret}
          onValue={setSecret}
        />
        <InputField
          id={`${prefix}-name`}
          label="Name"
          field="name"
          form={form}
          value={name}
          onValue={setName}
        />
        {!existing && <WorkspaceField workspaces={workspaces} value={ws} onValue={setWs} form={form} />}
        <InputField
          label="Order (lower first)"
          field="sort_order"
          form={form}
          type="number"
          min={0}
          step="1"
          value={order}
          onValue={setOrder}
        />
      </div>
      <div class="checks">
        <CheckField
          label="Fallback: use only after the platform's key"
          field="is_fallback"
          form={form}
          checked={fallback}
          onValue={setFallback}
        />
        <CheckField
          label="BYOK only: never fall back to the platform's key"
          field="is_byok_only"
          form={form}
          checked={byokOnly}
          onValue={setByokOnly}
        />
        <CheckField
          label="Required: like BYOK only, never the platform's key"
          field="is_required"
          form={form}
          checked={required}
          onValue={setRequired}
        />
        <CheckField
          label="Declares zero data retention"
          field="declared_zdr"
          form={form}
          checked={zdr}
          onValue={setZdr}
        />
      </div>
      <div class="row">
        <InputField
          label="Only for models (comma-separated, empty = all)"
          field="allowed_models"
          form={form}
          value={models}
          onValue={setModels}
        />
        <InputField
          label="Only for users (comma-separated ids, empty = all)"
          field="allowed_user_ids"
          form={form}
          value={users}
          onValue={setUsers}
        />
      </div>
      <KeyAllowlist
        legend="Only for these API keys (none checked = every key)"
        keys={keys}
        workspaceId={keysWorkspace}
        allowed={allow}
        onChange={setAllow}
      />
      <FormError form={form} />
      <button type="submit" disabled={form.busy}>
        {existing ? "Save provider key" : "Add provider key"}
      </button>
    </form>
  );
}
