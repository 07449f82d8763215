-- daily-series-by-model-and-workspace
SELECT
  g.model AS d_model,
  coalesce(g.workspace_id, {p3:String}) AS d_workspace,
  toUnixTimestamp(toStartOfDay(g.created_at), 'UTC') * 1000 AS t_bucket,
  count() AS m_request_count,
  sum(toInt128(g.usage_nano + g.byok_usage_inference_nano)) AS m_total_usage
FROM generations AS g
WHERE g.organization_id = {p2:String}
  AND g.created_at >= fromUnixTimestamp64Milli({p0:Int64}, 'UTC')
  AND g.created_at < fromUnixTimestamp64Milli({p1:Int64}, 'UTC')
GROUP BY d_model, d_workspace, t_bucket
ORDER BY t_bucket DESC NULLS LAST, d_model ASC NULLS LAST, d_workspace ASC NULLS LAST
LIMIT {p4:Int64};
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":"00000000-0000-4000-8000-0000000000dd","p4":10001}
