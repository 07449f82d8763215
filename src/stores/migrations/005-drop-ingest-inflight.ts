import type { Kysely } from "kysely";
import type { DialectCaps } from "../dialect.js";

/**
 * Drops `ingest_inflight` (migration 003): the in-flight markers of an ingest protocol that the
 * buffer (migration 004) replaced before any release, so no installation holds a marker to settle.
 * Migration 003 stays so that the applied-migrations list of existing databases still matches.
 */
export function dropIngestInflight(_caps: DialectCaps) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable("ingest_inflight").ifExists().execute();
    },
  };
}
