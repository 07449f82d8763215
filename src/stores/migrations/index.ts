import { Migrator, type Kysely, type Migration } from "kysely";
import type { DialectCaps } from "../dialect.js";
import { initial } from "./001-initial.js";
import { activityIngest } from "./002-activity-ingest.js";
import { ingestInflight } from "./003-ingest-inflight.js";
import { ingestBuffer } from "./004-ingest-buffer.js";
import { dropIngestInflight } from "./005-drop-ingest-inflight.js";
import { gatewayTables } from "./006-gateway.js";
import { broadcastOutbox } from "./007-broadcast-outbox.js";
import { policyNotify } from "./008-policy-notify.js";
import { historyIndexes } from "./009-history-indexes.js";
import { deliveryStatistics } from "./010-delivery-statistics.js";
import { reservationDay } from "./011-reservation-day.js";
import { generationContent } from "./012-generation-content.js";
import { creditLine } from "./013-credit-line.js";
import { guardrailsMembers } from "./014-guardrails-members.js";
import { feedbackActivity } from "./015-feedback-activity.js";
import { activityPending } from "./016-activity-pending.js";

/** Versioned migrations, applied in name order at start. Append; never edit a released one. */
export function migrations(caps: DialectCaps): Record<string, Migration> {
  return {
    "001-initial": initial(caps),
    "002-activity-ingest": activityIngest(caps),
    "003-ingest-inflight": ingestInflight(caps),
    "004-ingest-buffer": ingestBuffer(caps),
    "005-drop-ingest-inflight": dropIngestInflight(caps),
    "006-gateway": gatewayTables(caps),
    "007-broadcast-outbox": broadcastOutbox(caps),
    "008-policy-notify": policyNotify(caps),
    "009-history-indexes": historyIndexes(caps),
    "010-delivery-statistics": deliveryStatistics(caps),
    "011-reservation-day": reservationDay(caps),
    "012-generation-content": generationContent(caps),
    "013-credit-line": creditLine(caps),
    "014-guardrails-members": guardrailsMembers(caps),
    "015-feedback-activity": feedbackActivity(caps),
    "016-activity-pending": activityPending(caps),
  };
}

export async function migrateToLatest(db: Kysely<unknown>, caps: DialectCaps): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations(caps) },
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(`record store migration failed${failed ? ` at ${failed.migrationName}` : ""}`, {
      cause: error,
    });
  }
}
