import { UUID_RE } from "../../lib/ids.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Db } from "../../stores/record-store.js";
import { notFound } from "../errors.js";
import { findDestination, type DestinationRow } from "./destination-repo.js";
import { toDestination, type Destination } from "./destination-record.js";

export const DESTINATION_NOT_FOUND = "Observability destination";

/** The live destination row, or 404: a malformed id, a foreign or a deleted destination. */
export async function requireDestinationRow(
  db: Db,
  organizationId: string,
  id: string,
  lock = false,
): Promise<DestinationRow> {
  if (!UUID_RE.test(id)) throw notFound(DESTINATION_NOT_FOUND);
  const row = await findDestination(db, organizationId, id.toLowerCase(), lock);
  if (!row) throw notFound(DESTINATION_NOT_FOUND);
  return row;
}

export async function getDestination(
  db: Db,
  box: SecretBox,
  organizationId: string,
  id: string,
): Promise<Destination> {
  return toDestination(box, await requireDestinationRow(db, organizationId, id));
}
