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
      epoch_ms(date_trunc('hour', g.created_at)) AS t_bucket,
      coalesce(sum(g.tokens_prompt), 0) AS m_tokens_prompt
    FROM generations AS g
    WHERE g.organization_id = $p2
      AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
      AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
    GROUP BY d_api_key_id, t_bucket
  ) AS a
) AS r
WHERE x_rn <= CAST($p4 AS BIGINT)
ORDER BY t_bucket DESC NULLS LAST, d_api_key_id ASC NULLS LAST
LIMIT CAST($p3 AS BIGINT);
-- params: {"p0":1794873600000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":51,"p4":3}
