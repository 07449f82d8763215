import { flatMapChunks } from "../../lib/chunks.js";
import type { Db } from "../../stores/record-store.js";

/** Ids per lookup statement (bound values stay far under each engine's limit). */
const LOOKUP_CHUNK = 1_000;

/** Which of the ids are members of the organization, optionally share-locked until the transaction ends. */
export async function memberIdsIn(
  db: Db,
  organizationId: string,
  ids: readonly string[],
  lock: "none" | "share" = "none",
): Promise<Set<string>> {
  const rows = await flatMapChunks(ids, LOOKUP_CHUNK, (chunk) => {
    const q = db
      .selectFrom("members")
      .select("id")
      .where("organization_id", "=", organizationId)
      .where("id", "in", chunk);
    return (lock === "share" ? q.forShare() : q).execute();
  });
  return new Set(rows.map((r) => r.id));
}
