import { useEffect, useRef, useState } from "preact/hooks";
import { call } from "../api/client.ts";
import type { Guardrail, GuardrailBody } from "../api/guardrails.ts";
import type { Workspace } from "../api/types.ts";
import {
  ACTIONS,
  BUILTIN_LABELS,
  BUILTINS,
  ENABLE_FLAGS,
  REGIONS,
  SCOPED_BUILTIN,
  ZDR_FLAGS,
  type BuiltinSlug,
  type EnableFlag,
  type FilterAction,
  type Region,
  type ZdrFlag,
} from "../lib/guardrail-summary.ts";
import { CheckField, FormError, InputField, SelectField, useForm, WorkspaceField } from "./form.tsx";
import { ListPicker } from "./ListPicker.tsx";

/**
 * Creates or edits a guardrail, every field of the record (docs/guardrails.md). A save sends the
 * whole form: lists and filters replace the stored ones (the API's update semantics), an empty
 * list is sent as null (no restriction). The API's 400 is shown under the form and its field is
 * marked and focused; a custom filter's unsafe pattern (`content_filters[2].pattern: …`) is shown
 * at that filter's pattern field too.
 */

type Tri = "" | "true" | "false";
interface FilterRow {
  pattern: string;
  action: FilterAction;
  label: string;
}
interface BuiltinChoice {
  action: FilterAction;
  scope: "all_messages" | "user_only";
}
interface Draft {
  name: string;
  description: string;
  limit: string;
  reset: "" | "daily" | "weekly" | "monthly";
  byok: boolean;
  allowedModels: string[];
  ignoredModels: string[];
  allowedProviders: string[];
  ignoredProviders: string[];
  regions: Region[];
  flags: Record<ZdrFlag | EnableFlag, Tri>;
  filters: FilterRow[];
  builtins: Partial<Record<BuiltinSlug, BuiltinChoice>>;
}

const tri = (v: boolean | null): Tri => (v === null ? "" : v ? "true" : "false");
const untri = (v: Tri): boolean | null => (v === "" ? null : v === "true");
const orNull = <T,>(v: T[]): T[] | null => (v.length ? v : null);

function draftOf(g: Guardrail | undefined): Draft {
  const flags = {} as Record<ZdrFlag | EnableFlag, Tri>;
  for (const [f] of [...ZDR_FLAGS, ...ENABLE_FLAGS]) flags[f] = tri(g?.[f] ?? null);
  const builtins: Draft["builtins"] = {};
  for (const b of g?.content_filter_builtins ?? [])
    builtins[b.slug] = { action: b.action, scope: b.scan_scope ?? "all_messages" };
  return {
    name: g?.name ?? "",
    description: g?.description ?? "",
    limit: g?.limit_usd === null || g?.limit_usd === undefined ? "" : String(g.limit_usd),
    reset: g?.reset_interval ?? "",
    byok: g?.include_byok_in_budgets ?? false,
    allowedModels: g?.allowed_models ?? [],
    ignoredModels: g?.ignored_models ?? [],
    allowedProviders: g?.allowed_providers ?? [],
    ignoredProviders: g?.ignored_providers ?? [],
    regions: g?.allowed_data_regions ?? [],
    flags,
    filters: (g?.content_filters ?? []).map((f) => ({ ...f, label: f.label ?? "" })),
    builtins,
  };
}

/** The built-in detectors checked, in the checklist's order: the order they are sent in. */
const checkedBuiltins = (d: Draft) => BUILTINS.map(([slug]) => slug).filter((s) => d.builtins[s]);

function bodyOf(d: Draft): Omit<GuardrailBody, "workspace_id"> {
  const flags: Partial<Record<ZdrFlag | EnableFlag, boolean | null>> = {};
  for (const [f] of [...ZDR_FLAGS, ...ENABLE_FLAGS]) flags[f] = untri(d.flags[f]);
  return {
    name: d.name,
    description: d.description.trim() === "" ? null : d.description,
    // Both halves of the budget, always: both empty removes it, one alone is the API's 400.
    limit_usd: d.limit === "" ? null : Number(d.limit),
    reset_interval: d.reset === "" ? null : d.reset,
    include_byok_in_budgets: d.byok,
    allowed_models: orNull(d.allowedModels),
    ignored_models: orNull(d.ignoredModels),
    allowed_providers: orNull(d.allowedProviders),
    ignored_providers: orNull(d.ignoredProviders),
    allowed_data_regions: orNull(d.regions),
    ...flags,
    content_filters: orNull(
      d.filters.map((f) => ({ pattern: f.pattern, action: f.action, label: f.label.trim() || null })),
    ),
    content_filter_builtins: orNull(
      checkedBuiltins(d).map((slug) => {
        const c = d.builtins[slug]!;
        return { slug, action: c.action, ...(slug === SCOPED_BUILTIN ? { scan_scope: c.scope } : {}) };
      }),
    ),
  };
}

const TRI_ZDR = [
  ["", "not set"],
  ["true", "enforced"],
  ["false", "not enforced"],
] as const;
const TRI_ENABLE = [
  ["", "not set"],
  ["true", "allowed"],
  ["false", "not allowed"],
] as const;

export function GuardrailForm({
  existing,
  workspaces,
  modelNames,
  onSaved,
  onCancel,
}: {
  /** The guardrail to edit (a workspace's default one too); none: a new guardrail. */
  existing?: Guardrail;
  workspaces: Workspace[];
  modelNames: ReadonlyMap<string, string>;
  onSaved: (saved: Guardrail) => void;
  onCancel?: () => void;
}) {
  const [d, setD] = useState<Draft>(() => draftOf(existing));
  const [ws, setWs] = useState("");
  const form = useForm();
  const ref = useRef<HTMLFormElement>(null);
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setD((old) => ({ ...old, [k]: v }));
  const prefix = existing ? `g-${existing.id.slice(0, 8)}` : "g-new";

  // The field the API's 400 names gets the focus, so a long form scrolls to it.
  useEffect(() => {
    if (form.errorField) ref.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [form.error]);

  const builtinIndex = new Map(checkedBuiltins(d).map((s, i) => [s, i]));
  const setFilter = (i: number, f: FilterRow) =>
    set(
      "filters",
      d.filters.map((x, j) => (j === i ? f : x)),
    );
  const title = existing ? `Edit ${existing.name}` : "New guardrail";

  return (
    <form
      ref={ref}
      onSubmit={form.submit(() =>
        (existing
          ? call("patch", "/guardrails/{id}", { path: { id: existing.id }, body: bodyOf(d) })
          : call("post", "/guardrails", { body: { ...bodyOf(d), ...(ws ? { workspace_id: ws } : {}) } })
        ).then((r) => {
          if (!existing) setD(draftOf(undefined));
          onSaved(r.data);
        }),
      )}
      class="guardrail-form"
      aria-label={title}
    >
      <div class="row">
        <InputField
          id={`${prefix}-name`}
          label="Name"
          field="name"
          form={form}
          required
          value={d.name}
          onValue={(v) => set("name", v)}
        />
        <InputField
          id={`${prefix}-description`}
          label="Description"
          field="description"
          form={form}
          value={d.description}
          onValue={(v) => set("description", v)}
        />
        {!existing && <WorkspaceField workspaces={workspaces} value={ws} onValue={setWs} form={form} />}
      </div>

      <fieldset>
        <legend>Budget</legend>
        <div class="row">
          <InputField
            id={`${prefix}-limit`}
            label="Limit (USD, empty = none)"
            field="limit_usd"
            form={form}
            type="number"
            min={0}
            step="any"
            value={d.limit}
            onValue={(v) => set("limit", v)}
          />
          <SelectField
            id={`${prefix}-reset`}
            label="Resets"
            field="reset_interval"
            form={form}
            value={d.reset}
            onValue={(v) => set("reset", v as Draft["reset"])}
            options={[["", "(no budget)"], "daily", "weekly", "monthly"]}
          />
          <CheckField
            label="Count BYOK spend toward the budget"
            field="include_byok_in_budgets"
            form={form}
            checked={d.byok}
            onValue={(v) => set("byok", v)}
          />
        </div>
        <p class="help">
          Held per key (a key's own guardrail, a workspace's default) or per member (all keys of the member
          together).
        </p>
      </fieldset>

      <div class="pickers">
        <ListPicker
          legend="Allowed models"
          emptyMeans="every model"
          listId="guardrail-models"
          addLabel="Add an allowed model"
          names={modelNames}
          value={d.allowedModels}
          onChange={(v) => set("allowedModels", v)}
          field="allowed_models"
          form={form}
        />
        <ListPicker
          legend="Ignored models"
          emptyMeans="none ignored"
          listId="guardrail-models"
          addLabel="Add an ignored model"
          names={modelNames}
          value={d.ignoredModels}
          onChange={(v) => set("ignoredModels", v)}
          field="ignored_models"
          form={form}
        />
        <ListPicker
          legend="Allowed providers"
          emptyMeans="every provider"
          listId="guardrail-providers"
          addLabel="Add an allowed provider"
          value={d.allowedProviders}
          onChange={(v) => set("allowedProviders", v)}
          field="allowed_providers"
          form={form}
        />
        <ListPicker
          legend="Ignored providers"
          emptyMeans="none ignored"
          listId="guardrail-providers"
          addLabel="Add an ignored provider"
          value={d.ignoredProviders}
          onChange={(v) => set("ignoredProviders", v)}
          field="ignored_providers"
          form={form}
        />
      </div>

      <fieldset>
        <legend>Allowed data regions (none checked = any region)</legend>
        <div class="checks">
          {REGIONS.map((r) => (
            <CheckField
              key={r}
              label={r}
              field="allowed_data_regions"
              form={form}
              checked={d.regions.includes(r)}
              onValue={(on) =>
                set(
                  "regions",
                  REGIONS.filter((x) => (x === r ? on : d.regions.includes(x))),
                )
              }
            />
          ))}
        </div>
      </fieldset>

      <div class="pickers">
        <fieldset>
          <legend>Zero data retention</legend>
          <div class="row">
            {ZDR_FLAGS.map(([f, label]) => (
              <SelectField
                key={f}
                id={`${prefix}-${f}`}
                label={label}
                field={f}
                form={form}
                value={d.flags[f]}
                onValue={(v) => set("flags", { ...d.flags, [f]: v as Tri })}
                options={TRI_ZDR}
              />
            ))}
          </div>
          <p class="help">
            The deprecated flag is stored as given; each group's own flag above is what is sent with it.
          </p>
        </fieldset>
        <fieldset>
          <legend>Endpoints that publish or train on data</legend>
          <div class="row">
            {ENABLE_FLAGS.map(([f, label]) => (
              <SelectField
                key={f}
                id={`${prefix}-${f}`}
                label={label}
                field={f}
                form={form}
                value={d.flags[f]}
                onValue={(v) => set("flags", { ...d.flags, [f]: v as Tri })}
                options={TRI_ENABLE}
              />
            ))}
          </div>
        </fieldset>
      </div>

      <fieldset>
        <legend>Custom content filters</legend>
        <p class="help">
          JavaScript regular expressions (flags <code>gu</code>) checked at save: lookarounds, backreferences,
          nested quantifiers and patterns that match the empty text are refused.
        </p>
        {d.filters.map((f, i) => {
          const field = `content_filters[${i}]`;
          const patternError = form.errorField === `${field}.pattern`;
          return (
            <div class="group" key={i} role="group" aria-label={`Filter ${i + 1}`}>
              <div class="row">
                <InputField
                  id={`${prefix}-cf${i}-pattern`}
                  label={`Filter ${i + 1} pattern`}
                  field={`${field}.pattern`}
                  form={form}
                  required
                  value={f.pattern}
                  onValue={(pattern) => setFilter(i, { ...f, pattern })}
                />
                <SelectField
                  id={`${prefix}-cf${i}-action`}
                  label={`Filter ${i + 1} action`}
                  field={`${field}.action`}
                  form={form}
                  value={f.action}
                  onValue={(action) => setFilter(i, { ...f, action: action as FilterAction })}
                  options={ACTIONS}
                />
                <InputField
                  id={`${prefix}-cf${i}-label`}
                  label={`Filter ${i + 1} label`}
                  field={`${field}.label`}
                  form={form}
                  placeholder="[CUSTOM]"
                  value={f.label}
                  onValue={(label) => setFilter(i, { ...f, label })}
                />
                <button
                  type="button"
                  class="secondary"
                  onClick={() =>
                    set(
                      "filters",
                      d.filters.filter((_, j) => j !== i),
                    )
                  }
                >
                  Remove filter {i + 1}
                </button>
              </div>
              {patternError && <p class="error field-error">{form.error}</p>}
            </div>
          );
        })}
        <button
          type="button"
          class="secondary"
          onClick={() => set("filters", [...d.filters, { pattern: "", action: "redact", label: "" }])}
        >
          Add a filter
        </button>
      </fieldset>

      <fieldset>
        <legend>Built-in detectors</legend>
        <div class="builtins">
          {BUILTINS.map(([slug, label]) => {
            const choice = d.builtins[slug];
            const j = builtinIndex.get(slug);
            const field = j === undefined ? undefined : `content_filter_builtins[${j}]`;
            const choose = (c: BuiltinChoice | undefined) => set("builtins", { ...d.builtins, [slug]: c });
            return (
              <div class="row" key={slug} role="group" aria-label={label}>
                <CheckField
                  id={`${prefix}-b-${slug}`}
                  label={
                    <>
                      {label} <code>{BUILTIN_LABELS[slug]}</code>
                    </>
                  }
                  field={field && `${field}.slug`}
                  form={form}
                  checked={choice !== undefined}
                  onValue={(on) => choose(on ? { action: "redact", scope: "all_messages" } : undefined)}
                />
                {choice && (
                  <SelectField
                    id={`${prefix}-b-${slug}-action`}
                    label={
                      <>
                        <span class="sr-only">{label}: </span>action
                      </>
                    }
                    field={field && `${field}.action`}
                    form={form}
                    value={choice.action}
                    onValue={(a) => choose({ ...choice, action: a as FilterAction })}
                    options={ACTIONS}
                  />
                )}
                {choice && slug === SCOPED_BUILTIN && (
                  <SelectField
                    id={`${prefix}-b-${slug}-scope`}
                    label={
                      <>
                        <span class="sr-only">{label}: </span>scan
                      </>
                    }
                    field={field && `${field}.scan_scope`}
                    form={form}
                    value={choice.scope}
                    onValue={(s) => choose({ ...choice, scope: s as BuiltinChoice["scope"] })}
                    options={[
                      ["all_messages", "all messages"],
                      ["user_only", "the user's messages only"],
                    ]}
                  />
                )}
              </div>
            );
          })}
        </div>
      </fieldset>

      <FormError form={form} />
      <div class="row">
        <button type="submit" disabled={form.busy}>
          {existing ? "Save guardrail" : "Create guardrail"}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
