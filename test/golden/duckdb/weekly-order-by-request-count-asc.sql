-- weekly-order-by-request-count-asc
SELECT
  d_model,
  t_bucket,
  m_total_usage,
  m_request_count,
  max(x_n) OVER () AS x_group_max
FROM (
  SELECT
    d_model,
    t_bucket,
    m_total_usage,
    m_request_count,
    row_number() OVER (PARTITION BY d_model ORDER BY m_request_count ASC NULLS LAST, d_model ASC NULLS LAST, t_bucket DESC NULLS LAST) AS x_rn,
    count(*) OVER (PARTITION BY d_model) AS x_n
  FROM (
    SELECT
      g.model AS d_model,
      epoch_ms(date_trunc('week', g.created_at)) AS t_bucket,
      coalesce(sum(g.usage_nano + g.byok_usage_inference_nano), 0) AS m_total_usage,
      count(*) AS m_request_count
    FROM generations AS g
    WHERE g.organization_id = $p2
      AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
      AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
    GROUP BY d_model, t_bucket
  ) AS a
) AS r
WHERE x_rn <= CAST($p4 AS BIGINT)
ORDER BY m_request_count ASC NULLS LAST, d_model ASC NULLS LAST, t_bucket DESC NULLS LAST
LIMIT CAST($p3 AS BIGINT);
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":1001,"p4":10}
