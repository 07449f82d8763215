import { COLUMNS_BUT_CREATED_AT } from "../activity-row-of.js";
import type { BoundQuery, ReplayPageQuery } from "../activity-store.js";

/** ActivityStore.generationsForReplay's page in DuckDB's SQL. */
export function duckDbReplayQuery(page: ReplayPageQuery): BoundQuery {
  const after =
    page.after === null
      ? ""
      : `\n  AND (created_at > epoch_ms(CAST($afterMs AS BIGINT)) OR (created_at = epoch_ms(CAST($afterMs AS BIGINT)) AND id > $afterId))`;
  return {
    sql: `SELECT ${COLUMNS_BUT_CREATED_AT}, epoch_ms(created_at) AS created_at_ms FROM generations
WHERE organization_id = $org AND (workspace_id = $ws OR workspace_id IS NULL)
  AND created_at >= epoch_ms(CAST($from AS BIGINT)) AND created_at < epoch_ms(CAST($to AS BIGINT))${after}
ORDER BY created_at, id LIMIT ${Math.trunc(page.limit)}`,
    params: {
      org: page.organizationId,
      ws: page.workspaceId,
      from: page.fromMs,
      to: page.toMs,
      ...(page.after === null ? {} : { afterMs: page.after.createdAtMs, afterId: page.after.id }),
    },
  };
}
