import { useEffect, useState } from "preact/hooks";
import {
  DESTINATION_TYPES,
  type ConfigField,
  type DestinationType,
} from "../../../src/domain/destinations/destination-types.ts";
import type { Capabilities } from "../api/capabilities.ts";
import { API_BASE, call, errorText } from "../api/client.ts";
import { getKey } from "../api/session.ts";
import type { Destination, DestinationCreate, Key, Workspace } from "../api/types.ts";
import { ErrorNote, Loading } from "../components/ui.tsx";

/**
 * Destinations of all 17 types. The forms are generated from the server's own type table
 * (src/domain/destinations/destination-types.ts, bundled at build time): required fields, defaults,
 * enums and secrets. Secrets read back masked; a masked value sent back unchanged keeps the stored
 * secret, so the edit form sends only the fields the user changed.
 */
const TYPES = Object.keys(DESTINATION_TYPES) as DestinationType[];
type FilterRules = NonNullable<DestinationCreate["filter_rules"]>;
type Group = FilterRules["groups"][number];
type Rule = Group["rules"][number];
const RULE_FIELDS: Rule["field"][] = [
  "model",
  "provider",
  "session_id",
  "user_id",
  "api_key_name",
  "finish_reason",
  "input",
  "output",
  "total_cost",
  "total_tokens",
  "prompt_tokens",
  "completion_tokens",
];
const RULE_OPS: Rule["operator"][] = [
  "equals",
  "not_equals",
  "contains",
  "not_contains",
  "regex",
  "starts_with",
  "ends_with",
  "gt",
  "lt",
  "gte",
  "lte",
  "exists",
  "not_exists",
];

export function Destinations({ caps }: { caps: Capabilities | null }) {
  const [list, setList] = useState<Destination[] | null>(null);
  const [keys, setKeys] = useState<Key[]>([]);
  const [workspaces, setWorkspaces] = useState<Workspace[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const load = () =>
    call("get", "/observability/destinations", { query: { limit: 100 } }).then(
      (r) => setList(r.data),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
    void call("get", "/keys", {}).then((r) => setKeys(r.data));
    void call("get", "/workspaces", { query: { limit: 100 } }).then((r) => setWorkspaces(r.data));
  }, []);

  return (
    <section aria-labelledby="dest-title">
      <h1 id="dest-title">Observability destinations</h1>
      <details class="panel">
        <summary>Add a destination</summary>
        <DestinationForm keys={keys} workspaces={workspaces} onSaved={() => void load()} />
      </details>
      <ErrorNote error={error} />
      {!list ? (
        <Loading what="destinations" />
      ) : list.length === 0 ? (
        <p>No destinations yet.</p>
      ) : (
        list.map((d) => (
          <article class="panel dest" key={d.id} aria-labelledby={`d-${d.id}`}>
            <h2 id={`d-${d.id}`}>
              {d.name ?? "(unnamed)"} <span class="muted">{d.type}</span>
            </h2>
            <p>
              {d.enabled ? "Enabled" : "Disabled"} · sampling {d.sampling_rate} · workspace{" "}
              {workspaces.find((w) => w.id === d.workspace_id)?.name ?? d.workspace_id} ·{" "}
              {d.api_key_hashes?.length ? `${d.api_key_hashes.length} keys allowed` : "all keys"}
              {d.filter_rules?.enabled ? " · filter rules on" : ""}
            </p>
            <dl class="config">
              {Object.entries(d.config).map(([k, v]) => (
                <div key={k}>
                  <dt>{k}</dt>
                  <dd data-field={k}>{typeof v === "string" ? v : JSON.stringify(v)}</dd>
                </div>
              ))}
            </dl>
            <div class="row">
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  void call("patch", "/observability/destinations/{id}", {
                    path: { id: d.id },
                    body: { enabled: !d.enabled },
                  }).then(load, (e: unknown) => setError(errorText(e)))
                }
              >
                {d.enabled ? "Disable" : "Enable"}
                <span class="sr-only"> {d.name}</span>
              </button>
              <button
                type="button"
                class="secondary"
                aria-expanded={editing === d.id}
                onClick={() => setEditing(editing === d.id ? null : d.id)}
              >
                Edit<span class="sr-only"> {d.name}</span>
              </button>
              <button
                type="button"
                class="danger"
                onClick={() => {
                  if (!confirm(`Delete the destination "${d.name ?? d.type}"?`)) return;
                  void call("delete", "/observability/destinations/{id}", { path: { id: d.id } }).then(
                    load,
                    (e: unknown) => setError(errorText(e)),
                  );
                }}
              >
                Delete<span class="sr-only"> {d.name}</span>
              </button>
              {caps?.destinationTest && <Extra id={d.id} kind="test" />}
              {caps?.destinationDeliveries && <Extra id={d.id} kind="deliveries" />}
            </div>
            {editing === d.id && (
              <DestinationForm
                existing={d}
                keys={keys}
                workspaces={workspaces}
                onSaved={() => {
                  setEditing(null);
                  void load();
                }}
              />
            )}
          </article>
        ))
      )}
    </section>
  );
}

/** Connection test and delivery status: endpoints some servers have (capabilities.ts). */
function Extra({ id, kind }: { id: string; kind: "test" | "deliveries" }) {
  const [out, setOut] = useState<string | null>(null);
  const run = async () => {
    setOut("…");
    const res = await fetch(`${API_BASE}/observability/destinations/${encodeURIComponent(id)}/${kind}`, {
      method: kind === "test" ? "POST" : "GET",
      headers: { authorization: `Bearer ${getKey() ?? ""}`, accept: "application/json" },
      credentials: "omit",
    });
    const body: unknown = await res.json().catch(() => null);
    setOut(`${res.status}: ${JSON.stringify(body, null, 1).slice(0, 2000)}`);
  };
  return (
    <>
      <button type="button" class="secondary" onClick={() => void run()}>
        {kind === "test" ? "Test connection" : "Delivery status"}
      </button>
      {out && (
        <pre class="extra" role="status">
          {out}
        </pre>
      )}
    </>
  );
}

function DestinationForm({
  existing,
  keys,
  workspaces,
  onSaved,
}: {
  existing?: Destination;
  keys: Key[];
  workspaces: Workspace[];
  onSaved: () => void;
}) {
  const [type, setType] = useState<DestinationType>(existing?.type ?? "webhook");
  const [name, setName] = useState(existing?.name ?? "");
  const [ws, setWs] = useState("");
  const [config, setConfig] = useState<Record<string, string>>({});
  const [sampling, setSampling] = useState(String(existing?.sampling_rate ?? 1));
  const [enabled, setEnabled] = useState(existing?.enabled ?? true);
  const [allow, setAllow] = useState<string[]>(existing?.api_key_hashes ?? []);
  const [rules, setRules] = useState<FilterRules>(existing?.filter_rules ?? { enabled: false, groups: [] });
  const [error, setError] = useState<string | null>(null);
  const fields: readonly ConfigField[] = DESTINATION_TYPES[type];
  const prefix = existing ? `e-${existing.id.slice(0, 8)}` : "new";

  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    const changed = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== ""));
    const common = {
      name,
      enabled,
      sampling_rate: Number(sampling),
      api_key_hashes: allow.length ? allow : null,
      filter_rules: rules.groups.length ? rules : null,
    };
    const done = existing
      ? call("patch", "/observability/destinations/{id}", {
          path: { id: existing.id },
          body: { ...common, ...(Object.keys(changed).length ? { config: changed } : {}) },
        })
      : call("post", "/observability/destinations", {
          body: { ...common, type, config: changed, ...(ws ? { workspace_id: ws } : {}) },
        });
    done.then(
      () => {
        setConfig({});
        if (!existing) setName("");
        onSaved();
      },
      (err: unknown) => setError(errorText(err)),
    );
  };

  return (
    <form
      onSubmit={submit}
      class="dest-form"
      aria-label={existing ? `Edit ${existing.name ?? ""}` : "New destination"}
    >
      <div class="row">
        <label>
          Type
          <select
            value={type}
            disabled={Boolean(existing)}
            onChange={(e) => {
              setType(e.currentTarget.value as DestinationType);
              setConfig({});
            }}
          >
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name
          <input
            id={`${prefix}-name`}
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        {!existing && (
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
        )}
        <label>
          Sampling rate (0 to 1)
          <input
            type="number"
            min={0}
            max={1}
            step="0.01"
            value={sampling}
            onInput={(e) => setSampling(e.currentTarget.value)}
          />
        </label>
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />{" "}
          Enabled
        </label>
      </div>
      <fieldset>
        <legend>{type} settings</legend>
        <div class="row">
          {fields.map((f) => {
            const id = `${prefix}-cfg-${f.name}`;
            const stored = existing?.config[f.name];
            const shown = typeof stored === "string" ? stored : undefined;
            const hint = f.secret
              ? existing
                ? `stored: ${shown ?? "none"}; leave empty to keep`
                : "secret: stored encrypted, shown masked"
              : f.default !== undefined
                ? `default ${f.default}`
                : f.required
                  ? "required"
                  : "optional";
            return (
              <label key={f.name} for={id}>
                {f.name}
                {f.required && !existing ? " *" : ""}
                {f.check.kind === "enum" ? (
                  <select
                    id={id}
                    value={config[f.name] ?? shown ?? f.default ?? ""}
                    onChange={(e) => setConfig({ ...config, [f.name]: e.currentTarget.value })}
                  >
                    {f.check.values.map((v) => (
                      <option key={v}>{v}</option>
                    ))}
                  </select>
                ) : (
                  (() => {
                    const common = {
                      id,
                      name: f.name,
                      autoComplete: "off",
                      required: f.required && !existing,
                      placeholder: f.secret ? (shown ?? "") : (shown ?? f.default ?? ""),
                      value: config[f.name] ?? "",
                      "aria-describedby": `${id}-hint`,
                      onInput: (e: Event) =>
                        setConfig({ ...config, [f.name]: (e.currentTarget as HTMLInputElement).value }),
                    };
                    return f.secret ? (
                      <input type="password" {...common} />
                    ) : f.check.kind === "url" ? (
                      <input type="url" {...common} />
                    ) : (
                      <input type="text" {...common} />
                    );
                  })()
                )}
                <span id={`${id}-hint`} class="help">
                  {hint}
                  {f.check.kind === "pattern" ? `; ${f.check.description}` : ""}
                </span>
              </label>
            );
          })}
        </div>
      </fieldset>
      <fieldset>
        <legend>Key allowlist (none checked = every key)</legend>
        <div class="checks">
          {keys.map((k) => (
            <label key={k.hash}>
              <input
                type="checkbox"
                checked={allow.includes(k.hash)}
                onChange={(e) =>
                  setAllow(e.currentTarget.checked ? [...allow, k.hash] : allow.filter((h) => h !== k.hash))
                }
              />{" "}
              {k.name}
            </label>
          ))}
        </div>
      </fieldset>
      <FilterRulesEditor rules={rules} onChange={setRules} prefix={prefix} />
      <ErrorNote error={error} />
      <button type="submit">{existing ? "Save destination" : "Create destination"}</button>
    </form>
  );
}

function FilterRulesEditor({
  rules,
  onChange,
  prefix,
}: {
  rules: FilterRules;
  onChange: (r: FilterRules) => void;
  prefix: string;
}) {
  const groups = rules.groups;
  const setGroup = (i: number, g: Group) =>
    onChange({ ...rules, groups: groups.map((x, j) => (j === i ? g : x)) });
  return (
    <fieldset>
      <legend>Filter rules</legend>
      <label class="check">
        <input
          type="checkbox"
          checked={rules.enabled ?? false}
          onChange={(e) => onChange({ ...rules, enabled: e.currentTarget.checked })}
        />{" "}
        Apply filter rules (send only generations matching every group)
      </label>
      {groups.map((g, gi) => (
        <div class="group" key={gi} role="group" aria-label={`Rule group ${gi + 1}`}>
          <label>
            Group {gi + 1} logic
            <select
              value={g.logic ?? "and"}
              onChange={(e) => setGroup(gi, { ...g, logic: e.currentTarget.value as "and" | "or" })}
            >
              <option value="and">all rules (and)</option>
              <option value="or">any rule (or)</option>
            </select>
          </label>
          {g.rules.map((r, ri) => {
            const setRule = (nr: Rule) =>
              setGroup(gi, { ...g, rules: g.rules.map((x, j) => (j === ri ? nr : x)) });
            const id = `${prefix}-g${gi}-r${ri}`;
            return (
              <div class="row" key={ri}>
                <label for={`${id}-f`}>
                  Field
                  <select
                    id={`${id}-f`}
                    value={r.field}
                    onChange={(e) => setRule({ ...r, field: e.currentTarget.value as Rule["field"] })}
                  >
                    {RULE_FIELDS.map((f) => (
                      <option key={f}>{f}</option>
                    ))}
                  </select>
                </label>
                <label for={`${id}-o`}>
                  Operator
                  <select
                    id={`${id}-o`}
                    value={r.operator}
                    onChange={(e) => setRule({ ...r, operator: e.currentTarget.value as Rule["operator"] })}
                  >
                    {RULE_OPS.map((o) => (
                      <option key={o}>{o}</option>
                    ))}
                  </select>
                </label>
                <label for={`${id}-v`}>
                  Value
                  <input
                    id={`${id}-v`}
                    value={r.value === undefined ? "" : String(r.value)}
                    onInput={(e) => {
                      const v = e.currentTarget.value;
                      setRule({
                        ...r,
                        value: ["gt", "lt", "gte", "lte"].includes(r.operator) && v !== "" ? Number(v) : v,
                      });
                    }}
                  />
                </label>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => setGroup(gi, { ...g, rules: g.rules.filter((_, j) => j !== ri) })}
                >
                  Remove rule
                </button>
              </div>
            );
          })}
          <button
            type="button"
            class="secondary"
            onClick={() =>
              setGroup(gi, { ...g, rules: [...g.rules, { field: "model", operator: "equals", value: "" }] })
            }
          >
            Add rule to group {gi + 1}
          </button>
        </div>
      ))}
      <button
        type="button"
        class="secondary"
        onClick={() =>
          onChange({
            ...rules,
            groups: [...groups, { logic: "and", rules: [{ field: "model", operator: "equals", value: "" }] }],
          })
        }
      >
        Add rule group
      </button>
    </fieldset>
  );
}
