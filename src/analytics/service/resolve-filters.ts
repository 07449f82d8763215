import { flatMapChunks } from "../../lib/chunks.js";
import { keyIdsByHashes, keyNamesByIds } from "../../domain/keys/key-repo.js";
import { workspaceNamesByIds } from "../../domain/workspaces/workspace-repo.js";
import { HASH_RE } from "../../lib/ids.js";
import type { Db } from "../../stores/record-store.js";
import type { Plan, PlanFilter } from "../plan/plan.js";

const CHUNK = 500;

const chunked = <T, R>(items: readonly T[], fn: (chunk: T[]) => Promise<readonly R[]>): Promise<R[]> =>
  flatMapChunks(items, CHUNK, fn);

/** Key references (numeric id or 64-hex hash) → the organization's numeric key ids (deleted keys too: history). */
async function keyIds(db: Db, organizationId: string, refs: readonly (string | number)[]) {
  const hashes = refs.filter((r): r is string => typeof r === "string" && HASH_RE.test(r));
  const ids = refs.filter((r): r is number => typeof r === "number");
  const byHash = new Map<string, number>();
  const known = new Set<number>();
  for (const row of await chunked(hashes, (c) => keyIdsByHashes(db, organizationId, c))) {
    byHash.set(row.hash, Number(row.id));
  }
  for (const row of await chunked(ids, (c) => keyNamesByIds(db, organizationId, c))) {
    known.add(Number(row.id));
  }
  return (r: string | number): number | null =>
    typeof r === "number" ? (known.has(r) ? r : null) : (byHash.get(r) ?? null);
}

async function workspaceIds(db: Db, organizationId: string, refs: readonly (string | number)[]) {
  const ids = refs.filter((r): r is string => typeof r === "string");
  const known = new Set(
    (await chunked(ids, (c) => workspaceNamesByIds(db, organizationId, c))).map((r) => r.id),
  );
  return (r: string | number): string | null => (typeof r === "string" && known.has(r) ? r : null);
}

export interface ResolvedFilters {
  plan: Plan;
  warnings: string[];
}

/**
 * Filter values that name records (api_key_id, workspace) → stored ids. A value that names nothing
 * in the organization is a warning, not an error, and matches no rows: eq / gt / gte / lt / lte /
 * in with nothing left make the query match nothing; neq / not_in simply exclude nothing for it.
 */
export async function resolveFilters(db: Db, organizationId: string, plan: Plan): Promise<ResolvedFilters> {
  const warnings: string[] = [];
  const refsOf = (kind: "api_key" | "workspace") =>
    plan.filters.filter((f) => f.dimension.resolve === kind).flatMap((f) => f.values);
  const keyRefs = refsOf("api_key");
  const wsRefs = refsOf("workspace");
  const key = keyRefs.length > 0 ? await keyIds(db, organizationId, keyRefs) : null;
  const ws = wsRefs.length > 0 ? await workspaceIds(db, organizationId, wsRefs) : null;

  let matchesNothing = plan.matchesNothing;
  const filters: PlanFilter[] = [];
  plan.filters.forEach((f, i) => {
    const resolve = f.dimension.resolve === "api_key" ? key : f.dimension.resolve === "workspace" ? ws : null;
    if (!resolve) {
      filters.push(f);
      return;
    }
    const values: (string | number)[] = [];
    f.values.forEach((v, j) => {
      const id = resolve(v);
      if (id !== null) values.push(id);
      else {
        const at =
          f.operator === "in" || f.operator === "not_in"
            ? `filters[${i}].value[${j}]`
            : `filters[${i}].value`;
        const what =
          f.dimension.resolve === "api_key"
            ? `API key ${typeof v === "number" ? `id ${v}` : v}`
            : `workspace ${v}`;
        warnings.push(`${at}: ${what} was not found in this organization; it matches no rows`);
      }
    });
    if (values.length > 0) filters.push({ ...f, values });
    else if (f.operator !== "neq" && f.operator !== "not_in") matchesNothing = true;
  });
  return { plan: { ...plan, filters, matchesNothing }, warnings };
}
