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
      toUnixTimestamp(toMonday(g.created_at), 'UTC') * 1000 AS t_bucket,
      sum(toInt128(g.usage_nano + g.byok_usage_inference_nano)) AS m_total_usage,
      count() AS m_request_count
    FROM generations AS g
    WHERE g.organization_id = {p2:String}
      AND g.created_at >= fromUnixTimestamp64Milli({p0:Int64}, 'UTC')
      AND g.created_at < fromUnixTimestamp64Milli({p1:Int64}, 'UTC')
    GROUP BY d_model, t_bucket
  ) AS a
) AS r
WHERE x_rn <= {p4:Int64}
ORDER BY m_request_count ASC NULLS LAST, d_model ASC NULLS LAST, t_bucket DESC NULLS LAST
LIMIT {p3:Int64};
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":1001,"p4":10}
