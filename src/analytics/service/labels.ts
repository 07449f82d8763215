import { flatMapChunks } from "../../lib/chunks.js";
import { keyNamesByIds } from "../../domain/keys/key-repo.js";
import { workspaceNamesByIds } from "../../domain/workspaces/workspace-repo.js";
import type { Db } from "../../stores/record-store.js";
import type { LabelKind } from "../model/dimensions.js";
import { aliasOf } from "../plan/columns.js";
import type { Plan } from "../plan/plan.js";
import type { CanonicalRow } from "../result/canonical.js";

export interface Label {
  label: string;
  /** user only: the user's email, or null. */
  email?: string | null;
}

/** Per label kind: id (as text) → label. Ids missing here show as themselves. */
export type LabelMaps = Partial<Record<Exclude<LabelKind, "none">, Map<string, Label>>>;

const CHUNK = 500;

const lookup = <R>(ids: readonly string[], fn: (chunk: string[]) => Promise<readonly R[]>): Promise<R[]> =>
  flatMapChunks(ids, CHUNK, fn);

/**
 * Labels of the ids in the result rows, read from the record store: key names, workspace names
 * (deleted records too: the activity is history), app titles and user names and emails as ingest
 * last saw them.
 */
export async function loadLabels(
  db: Db,
  organizationId: string,
  plan: Plan,
  rows: readonly CanonicalRow[],
): Promise<LabelMaps> {
  const maps: LabelMaps = {};
  for (const [index, dim] of plan.dimensions.entries()) {
    if (dim.label === "none") continue;
    const alias = aliasOf(plan, { kind: "dimension", index });
    const ids = [
      ...new Set(
        rows
          .map((r) => r[alias])
          .filter((v) => v !== null && v !== undefined)
          .map(String),
      ),
    ];
    const map = new Map<string, Label>();
    maps[dim.label] = map;
    if (ids.length === 0) continue;
    switch (dim.label) {
      case "api_key":
        for (const r of await lookup(ids, (c) => keyNamesByIds(db, organizationId, c.map(Number)))) {
          map.set(String(r.id), { label: r.name });
        }
        break;
      case "workspace":
        for (const r of await lookup(ids, (c) => workspaceNamesByIds(db, organizationId, c))) {
          map.set(r.id, { label: r.name });
        }
        break;
      case "app":
        for (const r of await lookup(ids, (c) =>
          db
            .selectFrom("app_labels")
            .select(["app_id", "title"])
            .where("organization_id", "=", organizationId)
            .where("app_id", "in", c.map(Number))
            .execute(),
        )) {
          map.set(String(r.app_id), { label: r.title });
        }
        break;
      case "user":
        for (const r of await lookup(ids, (c) =>
          db
            .selectFrom("user_labels")
            .select(["user_id", "name", "email"])
            .where("organization_id", "=", organizationId)
            .where("user_id", "in", c)
            .execute(),
        )) {
          map.set(r.user_id, { label: r.name ?? r.user_id, email: r.email });
        }
        break;
    }
  }
  return maps;
}
