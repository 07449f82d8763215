import { invalid } from "../domain/errors.js";
import { workspaceIdsByRef } from "../domain/workspaces/workspace-repo.js";
import { UUID_RE } from "../lib/ids.js";
import { runAnalyticsQuery, type AnalyticsDeps } from "../analytics/service/run-query.js";
import type { QueryRequest } from "../analytics/plan/query-request.js";

export interface ActivityQuery {
  date?: string;
  api_key_hash?: string;
  user_id?: string;
  group_by?: "workspace";
  workspace_id?: string;
}

const DAY_MS = 86_400_000;

/**
 * GET /activity (SDK analytics.getUserActivity): daily usage per model (and provider, or
 * workspace with group_by=workspace) over the last 30 completed UTC days, or one of them with
 * `date`, from the analytics engine (the same query path as POST /analytics/query).
 * `providerName` turns a record's provider (a catalog slug for the gateway's generations) into
 * the display name `provider_name` carries, as GET /generation shows it.
 */
export async function userActivity(
  deps: AnalyticsDeps,
  organizationId: string,
  q: ActivityQuery,
  providerName: (provider: string) => string = (p) => p,
) {
  const today = Math.floor(deps.clock.now().getTime() / DAY_MS) * DAY_MS;
  let start = today - 30 * DAY_MS;
  let end = today;
  if (q.date !== undefined) {
    const d = Date.parse(`${q.date}T00:00:00Z`);
    if (!Number.isFinite(d) || new Date(d).toISOString().slice(0, 10) !== q.date) {
      throw invalid("date: must be a calendar date YYYY-MM-DD");
    }
    if (d < start || d >= end) throw invalid("date: must be one of the last 30 completed UTC days");
    start = d;
    end = d + DAY_MS;
  }
  const filters: NonNullable<QueryRequest["filters"]>[number][] = [];
  if (q.api_key_hash !== undefined)
    filters.push({ field: "api_key_id", operator: "eq", value: q.api_key_hash.toLowerCase() });
  if (q.user_id !== undefined) filters.push({ field: "user", operator: "eq", value: q.user_id });
  // workspace_id names a workspace of the organization (its UUID or slug; a deleted workspace keeps
  // its history), resolved here for both forms of the report, so that anything else is one 400
  // naming the parameter the client sent (not the analytics filter it becomes).
  const workspaceIds =
    q.workspace_id === undefined ? null : await workspacesNamed(deps, organizationId, q.workspace_id);
  if (workspaceIds !== null && q.group_by !== "workspace")
    filters.push({ field: "workspace", operator: "in", value: workspaceIds });
  const range = { start: new Date(start).toISOString(), end: new Date(end).toISOString() };
  const run = (extra: typeof filters) =>
    runAnalyticsQuery(deps, organizationId, {
      metrics: [
        "request_count",
        "credits_usage",
        "byok_usage",
        "tokens_prompt",
        "tokens_completion",
        "reasoning_tokens",
      ],
      dimensions: ["model", "provider"],
      filters: [...filters, ...extra],
      time_range: range,
      granularity: "day",
      limit: 10_000,
    });
  // Analytics shows workspaces by name; grouping runs one query per workspace to keep its id.
  const groups: { workspaceId: string | null; rows: Record<string, unknown>[] }[] = [];
  if (q.group_by === "workspace") {
    for (const id of workspaceIds ?? (await workspaceIdsByRef(deps.store.db, organizationId))) {
      groups.push({
        workspaceId: id,
        rows: (await run([{ field: "workspace", operator: "eq", value: id }])).data,
      });
    }
  } else {
    groups.push({ workspaceId: null, rows: (await run([])).data });
  }
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const num = (v: unknown) => (typeof v === "number" ? v : Number(v ?? 0));
  return {
    data: groups.flatMap(({ workspaceId, rows }) =>
      rows.map((r) => {
        const model = str(r.model);
        const provider = str(r.provider);
        return {
          date: str(r.date__day ?? r.created_at__day).slice(0, 10),
          model,
          model_permaslug: model,
          endpoint_id: `${model}:${provider}`,
          provider_name: providerName(provider),
          usage: num(r.credits_usage),
          byok_usage_inference: num(r.byok_usage),
          requests: Math.round(num(r.request_count)),
          prompt_tokens: Math.round(num(r.tokens_prompt)),
          completion_tokens: Math.round(num(r.tokens_completion)),
          reasoning_tokens: Math.round(num(r.reasoning_tokens)),
          ...(workspaceId !== null ? { workspace_id: workspaceId } : {}),
        };
      }),
    ),
  };
}

/** The workspaces `workspace_id` names (UUID, any case, or slug); 400 when it names none. */
async function workspacesNamed(deps: AnalyticsDeps, organizationId: string, ref: string): Promise<string[]> {
  const ids = await workspaceIdsByRef(
    deps.store.db,
    organizationId,
    UUID_RE.test(ref) ? ref.toLowerCase() : ref,
  );
  if (ids.length === 0) throw invalid("workspace_id: no such workspace in this organization");
  return ids;
}
