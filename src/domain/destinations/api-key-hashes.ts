import type { Db } from "../../stores/record-store.js";
import { keyHashesIn } from "../keys/key-repo.js";
import { invalid } from "../errors.js";

/**
 * `api_key_hashes`: null = every key. A list is lowercased and de-duplicated (first occurrence
 * kept), and every hash must name a live API key of the organization; an unknown one is 400.
 */
export async function normalizeApiKeyHashes(
  db: Db,
  organizationId: string,
  hashes: string[] | null | undefined,
): Promise<string[] | null> {
  if (hashes === null || hashes === undefined) return null;
  const unique = [...new Set(hashes.map((h) => h.toLowerCase()))];
  const known = await keyHashesIn(db, organizationId, unique, true);
  const missing = unique.findIndex((h) => !known.has(h));
  if (missing >= 0) {
    const index = hashes.findIndex((h) => h.toLowerCase() === unique[missing]);
    throw invalid(`api_key_hashes[${index}]: no API key with this hash in the organization`);
  }
  return unique;
}
