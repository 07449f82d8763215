-- daily-series-by-model-and-workspace
SELECT
  g.model AS d_model,
  coalesce(g.workspace_id, $p3) AS d_workspace,
  epoch_ms(date_trunc('day', g.created_at)) AS t_bucket,
  count(*) AS m_request_count,
  coalesce(sum(g.usage_nano + g.byok_usage_inference_nano), 0) AS m_total_usage
FROM generations AS g
WHERE g.organization_id = $p2
  AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
  AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
GROUP BY d_model, d_workspace, t_bucket
ORDER BY t_bucket DESC NULLS LAST, d_model ASC NULLS LAST, d_workspace ASC NULLS LAST
LIMIT CAST($p4 AS BIGINT);
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":"00000000-0000-4000-8000-0000000000dd","p4":10001}
