-- totals-every-metric-kind
SELECT
  count(*) AS m_request_count,
  coalesce(sum(g.tokens_prompt + g.tokens_completion), 0) AS m_tokens_total,
  count(*) FILTER (WHERE g.is_byok) AS m_byok_request_count,
  coalesce(sum(g.usage_nano + g.byok_usage_inference_nano), 0) AS m_total_usage,
  coalesce(sum(g.usage_nano) FILTER (WHERE NOT g.is_byok), 0) AS m_openrouter_usage,
  avg(g.latency_ms) AS m_avg_latency,
  quantile_cont(g.latency_ms, 0.9) AS m_p90_latency,
  quantile_cont(g.throughput, 0.99) AS m_p99_throughput,
  CASE WHEN coalesce(sum(g.tokens_prompt), 0) = 0 THEN NULL ELSE CAST(coalesce(sum(g.tokens_cached), 0) AS DOUBLE) / CAST(coalesce(sum(g.tokens_prompt), 0) AS DOUBLE) END AS m_cache_hit_rate,
  CASE WHEN count(*) = 0 THEN NULL ELSE CAST(count(*) FILTER (WHERE g.guardrail_invoked) AS DOUBLE) / CAST(count(*) AS DOUBLE) END AS m_guardrail_invoked_rate,
  CASE WHEN coalesce(sum(g.tokens_prompt + g.tokens_completion), 0) = 0 THEN NULL ELSE CAST(coalesce(sum(g.usage_nano + g.byok_usage_inference_nano), 0) AS DOUBLE) / CAST(coalesce(sum(g.tokens_prompt + g.tokens_completion), 0) AS DOUBLE) / 1000 END AS m_blended_cost_per_million_tokens
FROM generations AS g
WHERE g.organization_id = $p2
  AND g.created_at >= epoch_ms(CAST($p0 AS BIGINT))
  AND g.created_at < epoch_ms(CAST($p1 AS BIGINT))
ORDER BY m_request_count DESC NULLS LAST
LIMIT CAST($p3 AS BIGINT);
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":1001}
