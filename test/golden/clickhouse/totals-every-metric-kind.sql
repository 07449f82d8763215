-- totals-every-metric-kind
SELECT
  count() AS m_request_count,
  sum(toInt128(g.tokens_prompt + g.tokens_completion)) AS m_tokens_total,
  countIf(g.is_byok) AS m_byok_request_count,
  sum(toInt128(g.usage_nano + g.byok_usage_inference_nano)) AS m_total_usage,
  sumIf(toInt128(g.usage_nano), NOT g.is_byok) AS m_openrouter_usage,
  avgOrNull(g.latency_ms) AS m_avg_latency,
  quantileExactInclusiveOrNull(0.9)(g.latency_ms) AS m_p90_latency,
  quantileExactInclusiveOrNull(0.99)(g.throughput) AS m_p99_throughput,
  CASE WHEN sum(toInt128(g.tokens_prompt)) = 0 THEN NULL ELSE toFloat64(sum(toInt128(g.tokens_cached))) / toFloat64(sum(toInt128(g.tokens_prompt))) END AS m_cache_hit_rate,
  CASE WHEN count() = 0 THEN NULL ELSE toFloat64(countIf(g.guardrail_invoked)) / toFloat64(count()) END AS m_guardrail_invoked_rate,
  CASE WHEN sum(toInt128(g.tokens_prompt + g.tokens_completion)) = 0 THEN NULL ELSE toFloat64(sum(toInt128(g.usage_nano + g.byok_usage_inference_nano))) / toFloat64(sum(toInt128(g.tokens_prompt + g.tokens_completion))) / 1000 END AS m_blended_cost_per_million_tokens
FROM generations AS g
WHERE g.organization_id = {p2:String}
  AND g.created_at >= fromUnixTimestamp64Milli({p0:Int64}, 'UTC')
  AND g.created_at < fromUnixTimestamp64Milli({p1:Int64}, 'UTC')
ORDER BY m_request_count DESC NULLS LAST
LIMIT {p3:Int64};
-- params: {"p0":1793491200000,"p1":1794960000000,"p2":"00000000-0000-4000-8000-000000000001","p3":1001}
