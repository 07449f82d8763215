import { guardrailHref, type GovernedVia, type Guardrail } from "../api/guardrails.ts";
import { budgetText, guardrailTitle, rulesSummary } from "../lib/guardrail-summary.ts";

/**
 * Where a key or a workspace is shown, the guardrails that govern it, each a link to its editor on
 * the Guardrails page (docs/dashboard.md).
 */
const VIA: Record<GovernedVia, string> = {
  workspace: "workspace default",
  member: "its creator's",
  key: "the key's own",
};

/** A key's guardrails, outermost first ("none" when none applies). */
export function GovernedBy({ list }: { list: { guardrail: Guardrail; via: GovernedVia }[] }) {
  if (list.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="plain">
      {list.map(({ guardrail: g, via }) => {
        const title = guardrailTitle(g);
        return (
          <li key={`${via}-${g.id}`}>
            <a href={guardrailHref(g.id)}>{title}</a>
            {title.toLowerCase() !== VIA[via] && <span class="muted"> ({VIA[via]})</span>}
          </li>
        );
      })}
    </ul>
  );
}

/** A workspace's default guardrail: its budget and rules when stored, else that it has none. */
export function DefaultGuardrail({
  id,
  stored,
  workspace,
}: {
  id: string;
  stored: Guardrail | undefined;
  /** The workspace's name, for screen readers (every workspace has a link). */
  workspace: string;
}) {
  const what = <span class="sr-only"> (default guardrail of {workspace})</span>;
  if (!stored)
    return (
      <p class="muted default-guardrail">
        Default guardrail: not set up, no rules.{" "}
        <a href={guardrailHref(id)}>
          Set it up
          {what}
        </a>
      </p>
    );
  const title = guardrailTitle(stored);
  const rules = rulesSummary(stored);
  return (
    <p class="default-guardrail">
      Default guardrail{title === "Workspace default" ? "" : ` "${title}"`}:{" "}
      <span class="muted">
        {budgetText(stored)}
        {rules.length ? `; ${rules.join("; ")}` : "; no rules"}.
      </span>{" "}
      <a href={guardrailHref(id)}>
        Edit it
        {what}
      </a>
    </p>
  );
}
