-- classifier-named-dimensions-with-nulls
SELECT
  t0.value AS c_0,
  t1.value AS c_1,
  count(*) AS m_request_count,
  quantile_cont(g.latency_ms, 0.5) AS m_p50_latency
FROM generations AS g
LEFT JOIN (
  SELECT DISTINCT
    t.generation_id AS generation_id,
    t.value AS value
  FROM generation_tags AS t
  WHERE t.organization_id = $p2
    AND t.classifier_id = $p3
    AND t.created_at >= epoch_ms(CAST($p0 AS BIGINT))
    AND t.created_at < epoch_ms(CAST($p1 AS BIGINT))
    AND t.dimension_name = $p4
) AS t0 ON t0.generation_id = g.id
LEFT JOIN (
  SELECT DISTINCT
    t.generation_id AS generation_id,
    t.value AS value
  FROM generation_tags AS t
  WHERE t.organization_id = $p2
    AND t.classifier_id = $p3
    AND t.created_at >= epoch_ms(CAST($p0 AS BIGINT))
    AND t.created_at < epoch_ms(CAST($p1 AS BIGINT))
    AND t.dimension_name = $p5
) AS t1 ON t1.generation_id = g.id
WHERE g.organization_id = $p2
  AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
  AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
GROUP BY c_0, c_1
ORDER BY m_request_count DESC NULLS LAST, c_0 ASC NULLS LAST, c_1 ASC NULLS LAST
LIMIT CAST($p6 AS BIGINT);
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":"11111111-1111-4111-8111-111111111111","p4":"topic","p5":"language","p6":1001}
