-- hourly-group-limit
SELECT
  d_api_key_id,
  t_bucket,
  m_tokens_prompt,
  max(x_n) OVER () AS x_group_max
FROM (
  SELECT
    d_api_key_id,
    t_bucket,
    m_tokens_prompt,
    row_number() OVER (PARTITION BY d_api_key_id ORDER BY t_bucket DESC NULLS LAST, d_api_key_id ASC NULLS LAST) AS x_rn,
    count(*) OVER (PARTITION BY d_api_key_id) AS x_n
  FROM (
    SELECT
      g.api_key_id AS d_api_key_id,
      toUnixTimestamp(toStartOfHour(g.created_at), 'UTC') * 1000 AS t_bucket,
      sum(toInt128(g.tokens_prompt)) AS m_tokens_prompt
    FROM generations AS g
    WHERE g.organization_id = {p2:String}
      AND g.created_at >= fromUnixTimestamp64Milli({p0:Int64}, 'UTC')
      AND g.created_at < fromUnixTimestamp64Milli({p1:Int64}, 'UTC')
    GROUP BY d_api_key_id, t_bucket
  ) AS a
) AS r
WHERE x_rn <= {p4:Int64}
ORDER BY t_bucket DESC NULLS LAST, d_api_key_id ASC NULLS LAST
LIMIT {p3:Int64};
-- params: {"p0":1794873600000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":51,"p4":3}
