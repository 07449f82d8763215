import { useEffect, useState } from "preact/hooks";
import { capabilities } from "../api/capabilities.ts";
import { call, errorText } from "../api/client.ts";
import { allGuardrails, type Guardrail } from "../api/guardrails.ts";
import { allWorkspaces } from "../api/workspaces.ts";
import type { Budget, Workspace } from "../api/types.ts";
import { ConfirmButton, FormError, InputField, useForm } from "../components/form.tsx";
import { DefaultGuardrail } from "../components/GuardrailLinks.tsx";
import { ErrorNote, Loading } from "../components/ui.tsx";
import { usd, utc } from "../lib/format.ts";

const INTERVALS = ["daily", "weekly", "monthly", "lifetime"] as const;
type Interval = (typeof INTERVALS)[number];

const intervalOf = (b: Budget): Interval => b.reset_interval ?? "lifetime";

export function Workspaces() {
  const [list, setList] = useState<Workspace[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The stored guardrails by id, read once (null: none on this server, or not read yet). */
  const [guardrails, setGuardrails] = useState<Map<string, Guardrail> | null>(null);
  useEffect(() => {
    allWorkspaces().then(setList, (e: unknown) => setError(errorText(e)));
    void capabilities().then((c) =>
      c.guardrails
        ? allGuardrails().then(
            (gs) => setGuardrails(new Map(gs.map((g) => [g.id, g]))),
            (e: unknown) => setError(errorText(e)),
          )
        : undefined,
    );
  }, []);
  return (
    <section aria-labelledby="ws-title">
      <h1 id="ws-title">Workspaces and budgets</h1>
      <p class="help">
        Each workspace has up to four budgets. A shorter interval's limit may not exceed a longer one's; the
        server says which when it refuses a change.
      </p>
      <ErrorNote error={error} />
      {!list ? (
        <Loading what="workspaces" />
      ) : (
        list.map((w) => <WorkspaceBudgets key={w.id} ws={w} guardrails={guardrails} />)
      )}
    </section>
  );
}

function WorkspaceBudgets({ ws, guardrails }: { ws: Workspace; guardrails: Map<string, Guardrail> | null }) {
  const [budgets, setBudgets] = useState<Budget[] | null>(null);
  const [byok, setByok] = useState(ws.include_byok_in_budgets);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    call("get", "/workspaces/{workspace_ref}/budgets", { path: { workspace_ref: ws.id } }).then(
      (r) => {
        setBudgets(r.data);
        setByok(r.include_byok_in_budgets);
      },
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => void load(), [ws.id]);

  const toggleByok = (on: boolean) => {
    const any = budgets?.[0];
    if (!any) return;
    setError(null);
    // The switch is workspace-wide and travels with a budget write (the same limit, re-sent).
    call("put", "/workspaces/{workspace_ref}/budgets/{interval}", {
      path: { workspace_ref: ws.id, interval: intervalOf(any) },
      body: { limit_usd: any.limit_usd, include_byok_in_budgets: on },
    }).then(load, (e: unknown) => setError(errorText(e)));
  };

  const headingId = `ws-${ws.id}`;
  return (
    <article class="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>
        {ws.name} <span class="muted">({ws.slug})</span>
      </h2>
      {guardrails && (
        <DefaultGuardrail
          id={ws.default_guardrail_id}
          stored={guardrails.get(ws.default_guardrail_id)}
          workspace={ws.name}
        />
      )}
      <label class="check">
        <input
          type="checkbox"
          checked={byok}
          disabled={!budgets?.length}
          onChange={(e) => toggleByok(e.currentTarget.checked)}
        />{" "}
        Count BYOK spend toward this workspace's budgets
        {!budgets?.length && <span class="muted"> (set a budget first)</span>}
      </label>
      <ErrorNote error={error} />
      {!budgets ? (
        <Loading what="budgets" />
      ) : (
        <div class="budgets">
          {INTERVALS.map((i) => (
            <BudgetForm
              key={i}
              ws={ws}
              interval={i}
              budget={budgets.find((b) => intervalOf(b) === i) ?? null}
              onChanged={() => void load()}
            />
          ))}
        </div>
      )}
    </article>
  );
}

function BudgetForm({
  ws,
  interval,
  budget,
  onChanged,
}: {
  ws: Workspace;
  interval: Interval;
  budget: Budget | null;
  onChanged: () => void;
}) {
  const [limit, setLimit] = useState(budget ? String(budget.limit_usd) : "");
  const form = useForm();
  useEffect(() => setLimit(budget ? String(budget.limit_usd) : ""), [budget?.limit_usd]);
  const path = { workspace_ref: ws.id, interval };
  const save = form.submit(
    () =>
      call("put", "/workspaces/{workspace_ref}/budgets/{interval}", {
        path,
        body: { limit_usd: Number(limit) },
      }),
    onChanged,
  );
  // Asked first: without the budget, the workspace's spend in this interval has no ceiling.
  const remove = () =>
    void call("delete", "/workspaces/{workspace_ref}/budgets/{interval}", { path }).then(
      onChanged,
      (e: unknown) => form.setError(errorText(e)),
    );
  const title = interval[0]!.toUpperCase() + interval.slice(1);
  return (
    <div class="budget">
      <form onSubmit={save} aria-label={`${ws.name} ${interval} budget`}>
        <h3>{title}</h3>
        {budget ? (
          <dl>
            <dt>Spent</dt>
            <dd>{usd(budget.spent_usd)}</dd>
            <dt>Remaining</dt>
            <dd>{usd(budget.remaining_usd)}</dd>
            <dt>Resets at</dt>
            <dd>{budget.resets_at ? utc(budget.resets_at) : "never (lifetime)"}</dd>
          </dl>
        ) : (
          <p class="muted">No budget.</p>
        )}
        <InputField
          id={`b-${ws.id}-${interval}`}
          label="Limit (USD)"
          field="limit_usd"
          form={form}
          type="number"
          min={0}
          step="any"
          required
          value={limit}
          onValue={setLimit}
        />
        <div class="row">
          <button type="submit" disabled={form.busy}>
            Save {interval}
          </button>
        </div>
        <FormError form={form} />
      </form>
      {budget && (
        <div class="row">
          <ConfirmButton
            label="Remove"
            what={`${ws.name} ${interval} budget`}
            question={`Remove the ${interval} budget of "${ws.name}" (${usd(budget.limit_usd)})? Requests are then no longer held to it.`}
            confirmLabel={`Remove ${title.toLowerCase()} budget`}
            onConfirm={remove}
          />
        </div>
      )}
    </div>
  );
}
