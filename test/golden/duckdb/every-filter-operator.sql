-- every-filter-operator
SELECT
  g.user_id AS d_user,
  count(*) AS m_request_count
FROM generations AS g
WHERE g.organization_id = $p2
  AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
  AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
  AND g.model = $p3
  AND g.provider <> $p4
  AND g.app_id > CAST($p5 AS BIGINT)
  AND g.app_id <= CAST($p6 AS BIGINT)
  AND g.country >= $p7
  AND g.country < $p8
  AND (g.variant IN ($p9, $p10) OR g.variant IS NULL)
  AND g.finish_reason NOT IN ($p11) AND g.finish_reason IS NOT NULL
  AND coalesce(g.workspace_id, $p12) = $p12
GROUP BY d_user
ORDER BY m_request_count DESC NULLS LAST, d_user ASC NULLS LAST
LIMIT CAST($p13 AS BIGINT);
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":"openai/gpt-4o","p4":"x' OR 1=1 --","p5":3,"p6":300,"p7":"A","p8":"Z","p9":"free","p10":"thinking","p11":"error","p12":"00000000-0000-4000-8000-0000000000dd","p13":1001}
