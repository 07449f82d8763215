-- minute-window
SELECT
  epoch_ms(date_trunc('minute', g.created_at)) AS t_bucket,
  count(*) AS m_request_count
FROM generations AS g
WHERE g.organization_id = $p2
  AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
  AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
GROUP BY t_bucket
ORDER BY t_bucket DESC NULLS LAST
LIMIT CAST($p3 AS BIGINT);
-- params: {"p0":1794992400000,"p1":1795003200000,"p2":"00000000-0000-4000-8000-000000000001","p3":1001}
