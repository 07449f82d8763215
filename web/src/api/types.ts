import type { Answer, Body } from "./client.ts";

/** Shapes of the API's records, named for the pages (all derived from schema.gen.ts). */
export type Key = Answer<"/keys", "get">["data"][number];
export type Workspace = Answer<"/workspaces", "get">["data"][number];
export type Budget = Answer<"/workspaces/{workspace_ref}/budgets", "get">["data"][number];
export type Destination = Answer<"/observability/destinations", "get">["data"][number];
export type DestinationCreate = Body<"/observability/destinations", "post">;
export type AnalyticsMeta = Answer<"/analytics/meta", "get">["data"];
export type AnalyticsQuery = Body<"/analytics/query", "post">;
export type AnalyticsResult = Answer<"/analytics/query", "post">["data"];
export type AnalyticsRow = AnalyticsResult["data"][number];
