-- classifier-pairs-and-filters
SELECT
  g.model AS d_model,
  t0.dimension_name AS c_name,
  t0.value AS c_value,
  count(*) AS m_request_count
FROM generations AS g
INNER JOIN (
  SELECT DISTINCT
    t.generation_id AS generation_id,
    t.dimension_name AS dimension_name,
    t.value AS value
  FROM generation_tags AS t
  WHERE t.organization_id = $p2
    AND t.classifier_id = $p3
    AND t.created_at >= epoch_ms(CAST($p0 AS BIGINT))
    AND t.created_at < epoch_ms(CAST($p1 AS BIGINT))
) AS t0 ON t0.generation_id = g.id
WHERE g.organization_id = $p2
  AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
  AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
  AND g.id IN (
    SELECT
      t.generation_id AS generation_id
    FROM generation_tags AS t
    WHERE t.organization_id = $p2
      AND t.classifier_id = $p3
      AND t.created_at >= epoch_ms(CAST($p0 AS BIGINT))
      AND t.created_at < epoch_ms(CAST($p1 AS BIGINT))
      AND t.dimension_name = $p4
      AND t.value IN ($p5, $p6)
  )
  AND g.id IN (
    SELECT
      t.generation_id AS generation_id
    FROM generation_tags AS t
    WHERE t.organization_id = $p2
      AND t.classifier_id = $p3
      AND t.created_at >= epoch_ms(CAST($p0 AS BIGINT))
      AND t.created_at < epoch_ms(CAST($p1 AS BIGINT))
      AND t.dimension_name = $p7
  )
  AND g.id NOT IN (
    SELECT
      t.generation_id AS generation_id
    FROM generation_tags AS t
    WHERE t.organization_id = $p2
      AND t.classifier_id = $p3
      AND t.created_at >= epoch_ms(CAST($p0 AS BIGINT))
      AND t.created_at < epoch_ms(CAST($p1 AS BIGINT))
      AND t.dimension_name = $p7
      AND t.value IN ($p8)
  )
GROUP BY d_model, c_name, c_value
ORDER BY m_request_count DESC NULLS LAST, d_model ASC NULLS LAST, c_name ASC NULLS LAST, c_value ASC NULLS LAST
LIMIT CAST($p9 AS BIGINT);
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":"11111111-1111-4111-8111-111111111111","p4":"topic","p5":"billing","p6":"sales","p7":"language","p8":"de","p9":1001}
