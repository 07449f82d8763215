-- feedback-by-api-daily-with-classifier
SELECT
  d_api,
  t_bucket,
  c_0,
  m_feedback_count,
  m_feedback_latency_count,
  m_request_count,
  max(x_n) OVER () AS x_group_max
FROM (
  SELECT
    d_api,
    t_bucket,
    c_0,
    m_feedback_count,
    m_feedback_latency_count,
    m_request_count,
    row_number() OVER (PARTITION BY d_api ORDER BY m_feedback_count DESC NULLS LAST, d_api ASC NULLS LAST, c_0 ASC NULLS LAST, t_bucket DESC NULLS LAST) AS x_rn,
    count(*) OVER (PARTITION BY d_api) AS x_n
  FROM (
    SELECT
      g.api AS d_api,
      epoch_ms(date_trunc('day', g.created_at)) AS t_bucket,
      t0.value AS c_0,
      coalesce(sum(f.n_all), 0) AS m_feedback_count,
      coalesce(sum(f.n_latency), 0) AS m_feedback_latency_count,
      count(*) AS m_request_count
    FROM generations AS g
    INNER JOIN (
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
      SELECT
        fb.generation_id AS generation_id,
        count(*) AS n_all,
        count(*) FILTER (WHERE fb.category = $p5) AS n_latency
      FROM generation_feedback AS fb
      WHERE fb.organization_id = $p2
        AND fb.created_at >= epoch_ms(CAST($p0 AS BIGINT))
        AND fb.created_at < epoch_ms(CAST($p1 AS BIGINT))
      GROUP BY fb.generation_id
    ) AS f ON f.generation_id = g.id
    WHERE g.organization_id = $p2
      AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
      AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
    GROUP BY d_api, t_bucket, c_0
  ) AS a
) AS r
WHERE x_rn <= CAST($p7 AS BIGINT)
ORDER BY m_feedback_count DESC NULLS LAST, d_api ASC NULLS LAST, c_0 ASC NULLS LAST, t_bucket DESC NULLS LAST
LIMIT CAST($p6 AS BIGINT);
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":"11111111-1111-4111-8111-111111111111","p4":"topic","p5":"latency","p6":1001,"p7":5}
