-- monthly-series-no-dimensions
SELECT
  epoch_ms(date_trunc('month', g.created_at)) AS t_bucket,
  coalesce(sum(g.usage_nano), 0) AS m_credits_usage,
  coalesce(sum(g.byok_usage_inference_nano), 0) AS m_byok_usage
FROM generations AS g
WHERE g.organization_id = $p2
  AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
  AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
GROUP BY t_bucket
ORDER BY t_bucket DESC NULLS LAST
LIMIT CAST($p3 AS BIGINT);
-- params: {"p0":1767225600000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":1001}
