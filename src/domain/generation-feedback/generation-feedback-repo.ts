import type { FeedbackCategory } from "../../activity/feedback-row.js";
import type { Db } from "../../stores/record-store.js";

/** One submission of POST /generation/feedback. */
export interface GenerationFeedback {
  id: string;
  organizationId: string;
  generationId: string;
  category: FeedbackCategory;
  comment: string | null;
  /** The key that submitted it. */
  keyHash: string;
  /** ISO 8601 UTC. */
  createdAt: string;
}

export async function insertGenerationFeedback(db: Db, f: GenerationFeedback): Promise<void> {
  await db
    .insertInto("generation_feedback")
    .values({
      id: f.id,
      organization_id: f.organizationId,
      generation_id: f.generationId,
      category: f.category,
      comment: f.comment,
      key_hash: f.keyHash,
      created_at: f.createdAt,
    })
    .execute();
}

/** How many feedback submissions a generation of the organization has. */
export async function countGenerationFeedback(
  db: Db,
  organizationId: string,
  generationId: string,
): Promise<number> {
  const row = await db
    .selectFrom("generation_feedback")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("organization_id", "=", organizationId)
    .where("generation_id", "=", generationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How many feedback submissions the organization has stored. */
export async function countOrganizationFeedback(db: Db, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom("generation_feedback")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("organization_id", "=", organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Which of the given submission ids are stored. */
export async function storedFeedbackIds(db: Db, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom("generation_feedback")
    .select("id")
    .where("id", "in", [...ids])
    .execute();
  return rows.map((r) => r.id);
}
