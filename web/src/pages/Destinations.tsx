import { useEffect, useState } from "preact/hooks";
import {
  DESTINATION_TYPES,
  type ConfigField,
  type DestinationType,
} from "../../../src/domain/destinations/destination-types.ts";
import type { Capabilities } from "../api/capabilities.ts";
import { call, errorText, type Answer } from "../api/client.ts";
import { keysOf } from "../api/keys.ts";
import { allWorkspaces } from "../api/workspaces.ts";
import type { Destination, DestinationCreate, Key, Workspace } from "../api/types.ts";
import {
  CheckField,
  ConfirmButton,
  FormError,
  InputField,
  SelectField,
  ToggleButton,
  useForm,
  WorkspaceField,
} from "../components/form.tsx";
import { KeyAllowlist } from "../components/KeyAllowlist.tsx";
import { ErrorNote, Loading } from "../components/ui.tsx";
import { utc } from "../lib/format.ts";

/**
 * Destinations of all 17 types. The forms are generated from the server's own type table
 * (src/domain/destinations/destination-types.ts, bundled at build time): required fields, defaults,
 * enums and secrets. Secrets read back masked; a masked value sent back unchanged keeps the stored
 * secret, so the edit form sends only the fields the user changed.
 */
const TYPES = Object.keys(DESTINATION_TYPES) as DestinationType[];
type Deliveries = Answer<"/observability/destinations/{id}/deliveries", "get">["data"];
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
  // GET /observability/destinations lists one workspace (at most 5 per type each: one page of
  // 100 holds them all), so the page asks for every workspace's.
  const load = (list = workspaces) =>
    Promise.all(
      list.map((w) =>
        call("get", "/observability/destinations", { query: { limit: 100, workspace_id: w.id } }),
      ),
    ).then(
      (pages) =>
        setList(pages.flatMap((p) => p.data).sort((x, y) => y.created_at.localeCompare(x.created_at))),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    // The allowlist offers the keys of the destination's workspace: load every workspace's keys.
    void allWorkspaces()
      .then(async (all) => {
        setWorkspaces(all);
        await load(all);
        setKeys(await keysOf(all.map((w) => w.id)));
      })
      .catch((e: unknown) => setError(errorText(e)));
  }, []);

  return (
    <section aria-labelledby="dest-title">
      <h1 id="dest-title" tabIndex={-1}>
        Observability destinations
      </h1>
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
              {d.privacy_mode ? " · privacy mode (no prompts or completions)" : ""}
              {payloadExtras(d)}
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
              <ToggleButton
                enabled={d.enabled}
                what={d.name ?? d.type}
                onToggle={(enabled) =>
                  void call("patch", "/observability/destinations/{id}", {
                    path: { id: d.id },
                    body: { enabled },
                  }).then(
                    () => load(),
                    (e: unknown) => setError(errorText(e)),
                  )
                }
              />
              <button
                type="button"
                class="secondary"
                aria-expanded={editing === d.id}
                onClick={() => setEditing(editing === d.id ? null : d.id)}
              >
                Edit<span class="sr-only"> {d.name}</span>
              </button>
              <ConfirmButton
                label="Delete"
                what={d.name ?? d.type}
                question={`Delete the destination "${d.name ?? d.type}"? Generations stop going to it at once. This cannot be undone.`}
                confirmLabel="Delete destination"
                onConfirm={() =>
                  void call("delete", "/observability/destinations/{id}", { path: { id: d.id } }).then(
                    // The card and its buttons are gone: the focus goes to the page's heading.
                    () => load().then(() => document.getElementById("dest-title")?.focus()),
                    (e: unknown) => setError(errorText(e)),
                  )
                }
              />
            </div>
            <DestinationChecks id={d.id} caps={caps} />
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

/** What a destination's payloads carry beyond the metadata (docs/broadcast.md), as a summary. */
function payloadExtras(d: Destination): string {
  const extras = [
    d.broadcast_generation_cost && "cost",
    d.broadcast_generation_identity && "identity",
    d.broadcast_generation_request_context && "request context",
  ].filter(Boolean);
  return extras.length ? ` · sends ${extras.join(", ")}` : "";
}

const ms = (v: number) => `${Math.round(v)} ms`;

/**
 * Connection test and delivery status, where the server has them (capabilities.ts). The test
 * answers 200 whether or not the destination answered, so the result is read from its `ok`.
 */
function DestinationChecks({ id, caps }: { id: string; caps: Capabilities | null }) {
  const [test, setTest] = useState<string | null>(null);
  const [status, setStatus] = useState<Deliveries | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (!caps?.destinationTest && !caps?.destinationDeliveries) return null;
  const runTest = () => {
    setTest("Testing…");
    call("post", "/observability/destinations/{id}/test", { path: { id } }).then(
      ({ data: t }) =>
        setTest(
          t.ok
            ? `Connection test passed: HTTP ${t.status ?? "–"} in ${ms(t.latency_ms)}`
            : `Connection test failed: ${t.error ?? `HTTP ${t.status ?? "–"}`} (after ${ms(t.latency_ms)})`,
        ),
      (e: unknown) => setTest(`Could not run the test: ${errorText(e)}`),
    );
  };
  const loadStatus = () => {
    setError(null);
    call("get", "/observability/destinations/{id}/deliveries", { path: { id } }).then(
      (r) => setStatus(r.data),
      (e: unknown) => setError(errorText(e)),
    );
  };
  return (
    <>
      <div class="row">
        {caps.destinationTest && (
          <button type="button" class="secondary" onClick={runTest}>
            Test connection
          </button>
        )}
        {caps.destinationDeliveries && (
          <button type="button" class="secondary" onClick={loadStatus}>
            Delivery status
          </button>
        )}
      </div>
      <p class="extra" role="status">
        {test ?? ""}
      </p>
      <ErrorNote error={error} />
      {status && (
        <div role="group" aria-label="Delivery status">
          <dl class="config">
            <div>
              <dt>Pending</dt>
              <dd>{status.pending}</dd>
            </div>
            <div>
              <dt>Delivered</dt>
              <dd>{status.delivered}</dd>
            </div>
            <div>
              <dt>Dead-lettered</dt>
              <dd>{status.dead}</dd>
            </div>
            <div>
              <dt>Dropped over the queue cap</dt>
              <dd>{status.dropped_over_cap}</dd>
            </div>
            <div>
              <dt>Oldest pending</dt>
              <dd>
                {status.oldest_pending_age_ms === null ? "–" : `${ms(status.oldest_pending_age_ms)} old`}
              </dd>
            </div>
            <div>
              <dt>Circuit</dt>
              <dd>{status.circuit.replace("_", "-")}</dd>
            </div>
            <div>
              <dt>Last success</dt>
              <dd>{utc(status.last_success_at)}</dd>
            </div>
            <div>
              <dt>Last error</dt>
              <dd>{status.last_error ? `${status.last_error} (${utc(status.last_error_at)})` : "–"}</dd>
            </div>
          </dl>
          {status.recent_dead_letters.length > 0 && (
            <ul class="warnings" aria-label="Recent dead letters">
              {status.recent_dead_letters.map((l) => (
                <li key={l.id}>
                  {l.generations} generations from {utc(l.from)} to {utc(l.to)}, dead after {l.attempts}{" "}
                  attempts{l.last_error ? `: ${l.last_error}` : ""}
                </li>
              ))}
            </ul>
          )}
        </div>
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
  const [privacy, setPrivacy] = useState(existing?.privacy_mode ?? false);
  const [cost, setCost] = useState(existing?.broadcast_generation_cost ?? false);
  const [identity, setIdentity] = useState(existing?.broadcast_generation_identity ?? false);
  const [context, setContext] = useState(existing?.broadcast_generation_request_context ?? false);
  const [allow, setAllow] = useState<string[]>(existing?.api_key_hashes ?? []);
  const [rules, setRules] = useState<FilterRules>(existing?.filter_rules ?? { enabled: false, groups: [] });
  const form = useForm();
  const fields: readonly ConfigField[] = DESTINATION_TYPES[type];
  // Only the destination's own workspace's keys can match it. "" = the default workspace, which
  // GET /workspaces lists first.
  const keysWorkspace = existing?.workspace_id ?? (ws || workspaces[0]?.id);
  const prefix = existing ? `e-${existing.id.slice(0, 8)}` : "new";

  const submit = form.submit(
    () => {
      // New: the fields typed. Edit: the fields changed; a non-secret field emptied is sent as null,
      // which unsets it (back to its default); an empty secret field keeps the stored secret.
      const secretField = (name: string) => fields.some((f) => f.name === name && f.secret);
      const changed = Object.fromEntries(
        Object.entries(config)
          .filter(([k, v]) =>
            existing ? v !== (existing.config[k] ?? "") && !(v === "" && secretField(k)) : v !== "",
          )
          .map(([k, v]) => [k, v === "" ? null : v]),
      );
      const common = {
        name,
        enabled,
        privacy_mode: privacy,
        broadcast_generation_cost: cost,
        broadcast_generation_identity: identity,
        broadcast_generation_request_context: context,
        sampling_rate: Number(sampling),
        api_key_hashes: allow.length ? allow : null,
        filter_rules: rules.groups.length ? rules : null,
      };
      return existing
        ? call("patch", "/observability/destinations/{id}", {
            path: { id: existing.id },
            body: { ...common, ...(Object.keys(changed).length ? { config: changed } : {}) },
          })
        : call("post", "/observability/destinations", {
            body: { ...common, type, config: changed, ...(ws ? { workspace_id: ws } : {}) },
          });
    },
    () => {
      setConfig({});
      if (!existing) setName("");
      onSaved();
    },
  );

  return (
    <form
      onSubmit={submit}
      class="dest-form"
      aria-label={existing ? `Edit ${existing.name ?? ""}` : "New destination"}
    >
      <div class="row">
        <SelectField
          label="Type"
          field="type"
          form={form}
          value={type}
          disabled={Boolean(existing)}
          options={TYPES}
          onValue={(t) => {
            setType(t as DestinationType);
            setConfig({});
          }}
        />
        <InputField
          id={`${prefix}-name`}
          label="Name"
          field="name"
          form={form}
          required
          value={name}
          onValue={setName}
        />
        {!existing && <WorkspaceField workspaces={workspaces} value={ws} onValue={setWs} form={form} />}
        <InputField
          label="Sampling rate (0 to 1)"
          field="sampling_rate"
          form={form}
          type="number"
          min={0}
          max={1}
          step="any"
          value={sampling}
          onValue={setSampling}
        />
        <CheckField label="Enabled" field="enabled" form={form} checked={enabled} onValue={setEnabled} />
      </div>
      <fieldset>
        <legend>What is sent</legend>
        <div class="checks">
          <CheckField
            label="Privacy mode: never send prompts and completions"
            field="privacy_mode"
            form={form}
            checked={privacy}
            onValue={setPrivacy}
          />
          <CheckField
            label="Include cost (total, prompt, completion, BYOK)"
            field="broadcast_generation_cost"
            form={form}
            checked={cost}
            onValue={setCost}
          />
          <CheckField
            label="Include identity (API key, key hash prefix, user)"
            field="broadcast_generation_identity"
            form={form}
            checked={identity}
            onValue={setIdentity}
          />
          <CheckField
            label="Include request context (app, referer, session)"
            field="broadcast_generation_request_context"
            form={form}
            checked={context}
            onValue={setContext}
          />
        </div>
      </fieldset>
      <fieldset>
        <legend>{type} settings</legend>
        <div class="row">
          {fields.map((f) => {
            const id = `${prefix}-cfg-${f.name}`;
            const stored = existing?.config[f.name];
            const shown = typeof stored === "string" ? stored : undefined;
            const label = `${f.name}${f.required && !existing ? " *" : ""}`;
            const hint =
              (f.secret
                ? existing
                  ? `stored: ${shown ?? "none"}; leave empty to keep`
                  : "secret: stored encrypted, shown masked"
                : f.default !== undefined
                  ? `default ${f.default}`
                  : f.required
                    ? "required"
                    : "optional") +
              (existing && !f.secret && !f.required
                ? `; empty = ${f.default !== undefined ? "the default" : "none"}`
                : "") +
              (f.check.kind === "pattern" ? `; ${f.check.description}` : "");
            const set = (v: string) => setConfig({ ...config, [f.name]: v });
            return f.check.kind === "enum" ? (
              <SelectField
                key={f.name}
                id={id}
                label={label}
                field={`config.${f.name}`}
                form={form}
                hint={hint}
                value={config[f.name] ?? shown ?? f.default ?? ""}
                options={f.check.values}
                onValue={set}
              />
            ) : (
              <InputField
                key={f.name}
                id={id}
                name={f.name}
                label={label}
                field={`config.${f.name}`}
                form={form}
                hint={hint}
                type={f.secret ? "password" : f.check.kind === "url" ? "url" : "text"}
                required={f.required && !existing}
                placeholder={f.secret ? (shown ?? "") : (f.default ?? "")}
                value={config[f.name] ?? (f.secret ? "" : (shown ?? ""))}
                onValue={set}
              />
            );
          })}
        </div>
      </fieldset>
      <KeyAllowlist
        legend="Key allowlist (none checked = every key)"
        keys={keys}
        workspaceId={keysWorkspace}
        allowed={allow}
        onChange={setAllow}
      />
      <FilterRulesEditor rules={rules} onChange={setRules} prefix={prefix} />
      <FormError form={form} />
      <button type="submit" disabled={form.busy}>
        {existing ? "Save destination" : "Create destination"}
      </button>
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
      <CheckField
        label="Apply filter rules (send only generations matching every group)"
        checked={rules.enabled ?? false}
        onValue={(enabled) => onChange({ ...rules, enabled })}
      />
      {groups.map((g, gi) => (
        <div class="group" key={gi} role="group" aria-label={`Rule group ${gi + 1}`}>
          <SelectField
            label={`Group ${gi + 1} logic`}
            value={g.logic ?? "and"}
            onValue={(logic) => setGroup(gi, { ...g, logic: logic as "and" | "or" })}
            options={[
              ["and", "all rules (and)"],
              ["or", "any rule (or)"],
            ]}
          />
          {g.rules.map((r, ri) => {
            const setRule = (nr: Rule) =>
              setGroup(gi, { ...g, rules: g.rules.map((x, j) => (j === ri ? nr : x)) });
            const id = `${prefix}-g${gi}-r${ri}`;
            return (
              <div class="row" key={ri}>
                <SelectField
                  id={`${id}-f`}
                  label="Field"
                  value={r.field}
                  onValue={(field) => setRule({ ...r, field: field as Rule["field"] })}
                  options={RULE_FIELDS}
                />
                <SelectField
                  id={`${id}-o`}
                  label="Operator"
                  value={r.operator}
                  onValue={(operator) => setRule({ ...r, operator: operator as Rule["operator"] })}
                  options={RULE_OPS}
                />
                <InputField
                  id={`${id}-v`}
                  label="Value"
                  value={r.value === undefined ? "" : String(r.value)}
                  onValue={(v) =>
                    setRule({
                      ...r,
                      value: ["gt", "lt", "gte", "lte"].includes(r.operator) && v !== "" ? Number(v) : v,
                    })
                  }
                />
                <button
                  type="button"
                  class="secondary"
                  onClick={() => setGroup(gi, { ...g, rules: g.rules.filter((_, j) => j !== ri) })}
                >
                  Remove rule
                  <span class="sr-only">
                    {" "}
                    {ri + 1} of group {gi + 1}
                  </span>
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
