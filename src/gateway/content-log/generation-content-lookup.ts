import { notFound } from "../../domain/errors.js";
import type { Principal } from "../../domain/auth/principal.js";
import { findGenerationContent } from "../../domain/generation-content/generation-content-repo.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Db } from "../../stores/record-store.js";
import { openContent, retentionCutoff } from "./logged-content.js";

/** Longer than any generation id (as generation-lookup.ts). */
const MAX_ID_LENGTH = 128;

/** The `data` of GET /generation/content (docs/content-logging.md "Reading it"). */
export interface GenerationContentView {
  input: { messages: unknown[] };
  output: { completion: string | null; reasoning: string | null };
  error: null;
}

/**
 * GET /generation/content?id=: the logged prompt and completion of a generation, to the key that
 * made it and to its organization's management keys, as GET /generation. 404 to anyone else, and
 * when nothing was logged (IO logging off, not sampled, a key outside the list) or the content is
 * past its retention.
 */
export async function getGenerationContent(
  db: Db,
  box: SecretBox,
  who: Principal,
  id: string,
  now: Date,
  retentionMs: number,
): Promise<GenerationContentView> {
  if (id === "" || id.length > MAX_ID_LENGTH) throw notFound("Generation content");
  const row = await findGenerationContent(db, who.organizationId, id, retentionCutoff(now, retentionMs));
  if (!row || (!who.isManagement && row.keyHash !== who.keyHash)) throw notFound("Generation content");
  const content = openContent(box, row.organizationId, row.id, row.ciphertext);
  return {
    input: { messages: content.messages },
    // Reasoning text is not kept apart from the completion; only successful output is logged.
    output: { completion: content.completion, reasoning: null },
    error: null,
  };
}
