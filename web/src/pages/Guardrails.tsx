import { useEffect, useRef, useState } from "preact/hooks";
import type { Capabilities } from "../api/capabilities.ts";
import { catalogModels, catalogProviders, type CatalogEntry } from "../api/catalog.ts";
import { call, errorText } from "../api/client.ts";
import {
  allGuardrails,
  allKeyAssignments,
  allMemberAssignments,
  indexGuardrails,
  type Guardrail,
  type KeyAssignment,
  type MemberAssignment,
} from "../api/guardrails.ts";
import { allMembers, type Member } from "../api/members.ts";
import type { Workspace } from "../api/types.ts";
import { allWorkspaces } from "../api/workspaces.ts";
import { ConfirmButton, SelectField } from "../components/form.tsx";
import { GuardrailAssignments } from "../components/GuardrailAssignments.tsx";
import { GuardrailForm } from "../components/GuardrailForm.tsx";
import { ErrorNote, Loading } from "../components/ui.tsx";
import { budgetText, guardrailTitle, rulesSummary } from "../lib/guardrail-summary.ts";
import { navigate, useLocation } from "../lib/router.ts";

/**
 * The organization's guardrails (docs/guardrails.md): the stored ones of every workspace, created,
 * edited (every field), deleted after a confirmation, their keys and members assigned and
 * unassigned; and each workspace's default guardrail, which exists from the start without rules
 * and is stored by its first save. Guardrails and assignments are read whole once per load (and
 * again after a change); `/guardrails?id=…` opens one guardrail's editor (the Keys and Workspaces
 * pages link there).
 */
interface Loaded {
  guardrails: Guardrail[];
  keyAssignments: KeyAssignment[];
  memberAssignments: MemberAssignment[];
}

type Open = { id: string; what: "edit" | "assign" } | null;

export function Guardrails({ caps }: { caps: Capabilities }) {
  const { search } = useLocation();
  const wanted = search.get("id");
  const [data, setData] = useState<Loaded | null>(null);
  const [workspaces, setWorkspaces] = useState<Workspace[] | null>(null);
  const [members, setMembers] = useState<Member[] | null>(null);
  const [models, setModels] = useState<CatalogEntry[]>([]);
  const [providers, setProviders] = useState<CatalogEntry[]>([]);
  /** Workspace default guardrails read one by one (not stored yet, so not in the list). */
  const [defaults, setDefaults] = useState<Map<string, Guardrail>>(new Map());
  const [shown, setShown] = useState("");
  const [open, setOpen] = useState<Open>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  const customTable = useRef<HTMLDivElement>(null);
  const defaultsTable = useRef<HTMLDivElement>(null);

  const load = () =>
    Promise.all([allGuardrails(), allKeyAssignments(), allMemberAssignments()]).then(
      ([guardrails, keyAssignments, memberAssignments]) =>
        setData({ guardrails, keyAssignments, memberAssignments }),
      (e: unknown) => setError(errorText(e)),
    );
  const loadMembers = () =>
    caps.members ? allMembers().then(setMembers, (e: unknown) => setError(errorText(e))) : undefined;
  useEffect(() => {
    void load();
    void loadMembers();
    allWorkspaces().then(setWorkspaces, (e: unknown) => setError(errorText(e)));
    // Suggestions for the model and provider pickers; the API names an unknown one on save.
    catalogModels().then(setModels, () => undefined);
    catalogProviders().then(setProviders, () => undefined);
  }, []);

  const stored = new Map((data?.guardrails ?? []).map((g) => [g.id, g]));
  const wsOfDefault = new Map((workspaces ?? []).map((w) => [w.default_guardrail_id, w]));

  /** A workspace's default guardrail as stored, or as the API answers it before its first save. */
  const openDefault = (w: Workspace, what: "edit" = "edit") => {
    const id = w.default_guardrail_id;
    if (stored.has(id) || defaults.has(id)) return setOpen({ id, what });
    setError(null);
    call("get", "/guardrails/{id}", { path: { id } }).then(
      (r) => {
        setDefaults(new Map(defaults).set(id, r.data));
        setOpen({ id, what });
      },
      (e: unknown) => setError(errorText(e)),
    );
  };

  // `?id=` names a guardrail to open once everything is loaded (a link from the Keys page).
  useEffect(() => {
    if (!wanted || !data || !workspaces) return;
    const ws = wsOfDefault.get(wanted);
    if (ws) openDefault(ws);
    else if (stored.has(wanted)) setOpen({ id: wanted, what: "edit" });
    else setError(`There is no guardrail ${wanted} in this organization.`);
  }, [wanted, data !== null, workspaces !== null]);
  useEffect(() => {
    if (open) document.getElementById(`guardrail-${open.id}`)?.scrollIntoView({ block: "nearest" });
  }, [open?.id]);

  /**
   * After a change: reload, say what happened, close the editor. After a delete its button is gone,
   * so the focus goes to the table it was in rather than the page's start.
   */
  const changed = (done: string, focus?: HTMLElement | null) => {
    setStatus(done);
    setOpen(null);
    if (wanted) navigate("/guardrails", true);
    void load().then(() => focus?.focus());
  };
  const remove = (g: Guardrail, done: string) => {
    setError(null);
    call("delete", "/guardrails/{id}", { path: { id: g.id } }).then(
      () => {
        const next = new Map(defaults);
        next.delete(g.id);
        setDefaults(next);
        changed(done, (g.is_default ? defaultsTable : customTable).current);
      },
      (e: unknown) => setError(errorText(e)),
    );
  };

  const wsName = (id: string | null) => workspaces?.find((w) => w.id === id)?.name ?? id ?? "–";
  const modelNames = new Map(models.map((m) => [m.id, m.name]));
  const index = indexGuardrails(
    data?.guardrails ?? [],
    data?.keyAssignments ?? [],
    data?.memberAssignments ?? [],
  );
  const custom = (data?.guardrails ?? []).filter(
    (g) => !g.is_default && (!shown || g.workspace_id === shown),
  );
  const shownWorkspaces = (workspaces ?? []).filter((w) => !shown || w.id === shown);
  const toggle = (id: string, what: "edit" | "assign") =>
    setOpen(open?.id === id && open.what === what ? null : { id, what });

  const editor = (g: Guardrail, isDefault: boolean) => (
    <GuardrailForm
      key={g.id}
      existing={g}
      workspaces={workspaces ?? []}
      modelNames={modelNames}
      onSaved={(saved) =>
        changed(`${isDefault ? `Default guardrail of ${wsName(saved.workspace_id)}` : saved.name} saved`)
      }
      onCancel={() => setOpen(null)}
    />
  );

  return (
    <section aria-labelledby="guardrails-title">
      <h1 id="guardrails-title">Guardrails</h1>
      <p class="help">
        A guardrail limits which models and providers may serve a request, through which data regions, how
        much may be spent, and what content is redacted, flagged or blocked. It governs the requests of the
        keys and members it is assigned to; a workspace's default guardrail governs every request of the
        workspace. Where several apply, the strictest wins.
      </p>
      <datalist id="guardrail-models">
        {models.map((m) => (
          <option key={m.id} value={m.id}>
            {m.name}
          </option>
        ))}
      </datalist>
      <datalist id="guardrail-providers">
        {providers.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </datalist>
      <details class="panel">
        <summary>Create a guardrail</summary>
        <GuardrailForm
          workspaces={workspaces ?? []}
          modelNames={modelNames}
          onSaved={(g) => changed(`${g.name} created`)}
        />
      </details>
      <ErrorNote error={error} />
      <p class="sr-only" role="status">
        {status}
      </p>
      <div class="row">
        <SelectField
          label="Show guardrails of"
          value={shown}
          onValue={setShown}
          options={[["", "every workspace"], ...(workspaces ?? []).map((w) => [w.id, w.name] as const)]}
        />
      </div>
      {!data || !workspaces ? (
        <Loading what="guardrails" />
      ) : (
        <>
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Guardrails" ref={customTable}>
            <table class="stack">
              <caption>Guardrails ({custom.length})</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Workspace</th>
                  <th scope="col">Budget</th>
                  <th scope="col">Rules</th>
                  <th scope="col">Assigned to</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {custom.length === 0 && (
                  <tr>
                    <td colSpan={6}>No guardrails{shown ? " in this workspace" : ""} yet.</td>
                  </tr>
                )}
                {custom.map((g) => {
                  const keys = data.keyAssignments.filter((a) => a.guardrail_id === g.id);
                  const people = data.memberAssignments.filter((a) => a.guardrail_id === g.id);
                  const isOpen = open?.id === g.id;
                  return (
                    <>
                      <tr key={g.id} id={`guardrail-${g.id}`}>
                        <th scope="row">
                          {g.name}
                          {g.description && <span class="muted"> · {g.description}</span>}
                        </th>
                        <td data-label="Workspace">{wsName(g.workspace_id)}</td>
                        <td data-label="Budget">{budgetText(g)}</td>
                        <td data-label="Rules">
                          <Rules g={g} />
                        </td>
                        <td data-label="Assigned to">
                          {keys.length} key{keys.length === 1 ? "" : "s"}
                          {caps.members && `, ${people.length} member${people.length === 1 ? "" : "s"}`}
                        </td>
                        <td class="actions">
                          <button
                            type="button"
                            class="secondary"
                            aria-expanded={isOpen && open.what === "edit"}
                            onClick={() => toggle(g.id, "edit")}
                          >
                            Edit<span class="sr-only"> {g.name}</span>
                          </button>
                          <button
                            type="button"
                            class="secondary"
                            aria-expanded={isOpen && open.what === "assign"}
                            onClick={() => toggle(g.id, "assign")}
                          >
                            Assign<span class="sr-only"> {g.name}</span>
                          </button>
                          <ConfirmButton
                            label="Delete"
                            what={g.name}
                            question={`Delete the guardrail "${g.name}"? Its ${keys.length} key and ${people.length} member assignments go with it, and its rules stop applying at once. This cannot be undone.`}
                            confirmLabel="Delete guardrail"
                            onConfirm={() => remove(g, `${g.name} deleted`)}
                          />
                        </td>
                      </tr>
                      {isOpen && (
                        <tr key={`${g.id}-open`}>
                          <td colSpan={6}>
                            {open.what === "edit" ? (
                              editor(g, false)
                            ) : (
                              <GuardrailAssignments
                                guardrail={g}
                                index={index}
                                keyAssignments={keys}
                                memberAssignments={people}
                                members={caps.members ? members : null}
                                onChanged={(done) => {
                                  setStatus(done);
                                  void load();
                                }}
                              />
                            )}
                          </td>
                        </tr>
                      )}
                    </>
                  );
                })}
              </tbody>
            </table>
          </div>

          <h2 id="defaults-title" class="spaced">
            Workspace defaults
          </h2>
          <p class="help">
            Every workspace has a default guardrail that governs all of its requests without any assignment.
            It has no rules until it is first saved here.
          </p>
          <div
            class="table-scroll"
            tabIndex={0}
            role="region"
            aria-label="Workspace default guardrails"
            ref={defaultsTable}
          >
            <table class="stack">
              <caption>Workspace default guardrails ({shownWorkspaces.length})</caption>
              <thead>
                <tr>
                  <th scope="col">Workspace</th>
                  <th scope="col">Budget</th>
                  <th scope="col">Rules</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {shownWorkspaces.map((w) => {
                  const id = w.default_guardrail_id;
                  const g = stored.get(id);
                  const isOpen = open?.id === id;
                  const what = `default guardrail of ${w.name}`;
                  const draft = g ?? defaults.get(id);
                  return (
                    <>
                      <tr key={id} id={`guardrail-${id}`}>
                        <th scope="row">
                          {w.name}
                          {g && guardrailTitle(g) !== "Workspace default" && (
                            <span class="muted"> · {g.name}</span>
                          )}
                        </th>
                        <td data-label="Budget">{g ? budgetText(g) : "no budget"}</td>
                        <td data-label="Rules">{g ? <Rules g={g} /> : "not set up: no rules"}</td>
                        <td class="actions">
                          <button
                            type="button"
                            class="secondary"
                            aria-expanded={isOpen}
                            onClick={() => (isOpen ? setOpen(null) : openDefault(w))}
                          >
                            Edit<span class="sr-only"> {what}</span>
                          </button>
                          {g && (
                            <ConfirmButton
                              label="Clear"
                              what={what}
                              question={`Clear the default guardrail of "${w.name}"? Its rules and budget stop applying to the workspace's requests at once.`}
                              confirmLabel="Clear default guardrail"
                              onConfirm={() => remove(g, `Default guardrail of ${w.name} cleared`)}
                            />
                          )}
                        </td>
                      </tr>
                      {isOpen && draft && (
                        <tr key={`${id}-open`}>
                          <td colSpan={4}>{editor(draft, true)}</td>
                        </tr>
                      )}
                    </>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

function Rules({ g }: { g: Guardrail }) {
  const rules = rulesSummary(g);
  if (rules.length === 0) return <span class="muted">no rules</span>;
  return (
    <ul class="plain">
      {rules.map((r) => (
        <li key={r}>{r}</li>
      ))}
    </ul>
  );
}
