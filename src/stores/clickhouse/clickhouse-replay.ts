import { COLUMNS_BUT_CREATED_AT } from "../activity-row-of.js";
import type { BoundQuery, ReplayPageQuery } from "../activity-store.js";

/** ActivityStore.generationsForReplay's page in ClickHouse's SQL (server and in-process). */
export function clickHouseReplayQuery(page: ReplayPageQuery): BoundQuery {
  const at = (name: string) => `fromUnixTimestamp64Milli({${name}:Int64}, 'UTC')`;
  const after =
    page.after === null
      ? ""
      : `\n  AND (created_at > ${at("afterMs")} OR (created_at = ${at("afterMs")} AND id > {afterId:String}))`;
  return {
    sql: `SELECT ${COLUMNS_BUT_CREATED_AT}, toUnixTimestamp64Milli(created_at) AS created_at_ms FROM generations
WHERE organization_id = {org:String} AND (workspace_id = {ws:String} OR workspace_id IS NULL)
  AND created_at >= ${at("from")} AND created_at < ${at("to")}${after}
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
