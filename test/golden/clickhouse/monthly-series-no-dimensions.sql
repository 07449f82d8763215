-- monthly-series-no-dimensions
SELECT
  toUnixTimestamp(toStartOfMonth(g.created_at), 'UTC') * 1000 AS t_bucket,
  sum(toInt128(g.usage_nano)) AS m_credits_usage,
  sum(toInt128(g.byok_usage_inference_nano)) AS m_byok_usage
FROM generations AS g
WHERE g.organization_id = {p2:String}
  AND g.created_at >= fromUnixTimestamp64Milli({p0:Int64}, 'UTC')
  AND g.created_at < fromUnixTimestamp64Milli({p1:Int64}, 'UTC')
GROUP BY t_bucket
ORDER BY t_bucket DESC NULLS LAST
LIMIT {p3:Int64};
-- params: {"p0":1767225600000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":1001}
