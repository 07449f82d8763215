import { chunksOf } from "../../../lib/chunks.js";
import { sql } from "kysely";
import type { DialectCaps } from "../../../stores/dialect.js";
import type { Db } from "../../../stores/record-store.js";
import { jsonRows } from "../../../stores/sqlite/json-rows.js";

/**
 * Labels of analytics dimensions whose values are ids: app titles and user names/emails. Ingest
 * writes them ("the latest seen wins": a later record's label replaces the stored one; a record
 * without a label leaves it as it is); analytics reads them to show `app` and `user` rows.
 */
export interface UserLabel {
  name: string | null;
  email: string | null;
}

const CHUNK = 500;

/**
 * Sets the title of each app (latest wins). Call inside the ingest transaction. On SQLite (with
 * caps) the rows go in as one JSON parameter.
 */
export async function upsertAppLabels(
  db: Db,
  organizationId: string,
  titles: ReadonlyMap<number, string>,
  caps?: DialectCaps,
): Promise<void> {
  const json = caps?.bulkRowsAsJson ? jsonRows([...titles]) : null;
  if (json !== null) {
    await sql`
      INSERT INTO app_labels (organization_id, app_id, title)
      SELECT ${organizationId}, value ->> 0, value ->> 1 FROM json_each(${json}) WHERE true
      ON CONFLICT (organization_id, app_id) DO UPDATE SET title = excluded.title`.execute(db);
    return;
  }
  const rows = [...titles].map(([appId, title]) => ({
    organization_id: organizationId,
    app_id: appId,
    title,
  }));
  for (const chunk of chunksOf(rows, CHUNK)) {
    await db
      .insertInto("app_labels")
      .values(chunk)
      .onConflict((oc) =>
        oc.columns(["organization_id", "app_id"]).doUpdateSet((eb) => ({ title: eb.ref("excluded.title") })),
      )
      .execute();
  }
}

/** Sets the name and/or email of each user (latest wins, field by field). */
export async function upsertUserLabels(
  db: Db,
  organizationId: string,
  labels: ReadonlyMap<string, UserLabel>,
  caps?: DialectCaps,
): Promise<void> {
  const json = caps?.bulkRowsAsJson ? jsonRows([...labels].map(([id, l]) => [id, l.name, l.email])) : null;
  if (json !== null) {
    await sql`
      INSERT INTO user_labels (organization_id, user_id, name, email)
      SELECT ${organizationId}, value ->> 0, value ->> 1, value ->> 2 FROM json_each(${json}) WHERE true
      ON CONFLICT (organization_id, user_id) DO UPDATE SET
        name = coalesce(excluded.name, user_labels.name),
        email = coalesce(excluded.email, user_labels.email)`.execute(db);
    return;
  }
  const rows = [...labels].map(([userId, l]) => ({
    organization_id: organizationId,
    user_id: userId,
    name: l.name,
    email: l.email,
  }));
  for (const chunk of chunksOf(rows, CHUNK)) {
    await db
      .insertInto("user_labels")
      .values(chunk)
      .onConflict((oc) =>
        oc.columns(["organization_id", "user_id"]).doUpdateSet((eb) => ({
          name: eb.fn.coalesce(eb.ref("excluded.name"), eb.ref("user_labels.name")),
          email: eb.fn.coalesce(eb.ref("excluded.email"), eb.ref("user_labels.email")),
        })),
      )
      .execute();
  }
}

/** Titles of the given apps (all of the organization's when appIds is omitted). */
export async function readAppLabels(
  db: Db,
  organizationId: string,
  appIds?: readonly number[],
): Promise<Map<number, string>> {
  let q = db
    .selectFrom("app_labels")
    .select(["app_id", "title"])
    .where("organization_id", "=", organizationId);
  if (appIds) {
    if (appIds.length === 0) return new Map();
    q = q.where("app_id", "in", [...new Set(appIds)]);
  }
  const rows = await q.execute();
  return new Map(rows.map((r) => [Number(r.app_id), r.title]));
}

/** Name and email of the given users (all of the organization's when userIds is omitted). */
export async function readUserLabels(
  db: Db,
  organizationId: string,
  userIds?: readonly string[],
): Promise<Map<string, UserLabel>> {
  let q = db
    .selectFrom("user_labels")
    .select(["user_id", "name", "email"])
    .where("organization_id", "=", organizationId);
  if (userIds) {
    if (userIds.length === 0) return new Map();
    q = q.where("user_id", "in", [...new Set(userIds)]);
  }
  const rows = await q.execute();
  return new Map(rows.map((r) => [r.user_id, { name: r.name, email: r.email }]));
}
