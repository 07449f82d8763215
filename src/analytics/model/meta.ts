import { DIMENSIONS } from "./dimensions.js";
import { GRANULARITIES } from "./granularities.js";
import { METRICS } from "./metrics.js";
import { OPERATORS } from "./operators.js";

/** GET /analytics/meta: the model's public lists, generated from the same data the compiler uses. */
export function analyticsMeta() {
  return {
    metrics: METRICS.map((x) => ({
      name: x.name,
      display_label: x.display_label,
      is_rate: x.is_rate,
      display_format: x.display_format,
    })),
    dimensions: DIMENSIONS.map((x) => ({ name: x.name, display_label: x.display_label })),
    operators: OPERATORS.map((x) => ({ name: x.name, value_type: x.value_type })),
    granularities: GRANULARITIES.map((x) => ({ name: x.name, display_label: x.display_label })),
  };
}
