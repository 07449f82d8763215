import { Type, type Static } from "typebox";
import { Nullable } from "./common.js";

/** Wire schemas of the Broadcast operations on a destination (docs/broadcast.md "Operations"). */

export const TestResultSchema = Type.Object({
  ok: Type.Boolean({ description: "2xx (for webhooks also 400, as the hosted original counts it)" }),
  status: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when no answer came" })),
  latency_ms: Type.Number(),
  error: Nullable(Type.String({ description: "What went wrong, secrets masked; null when ok" })),
});
export const TestResultResponse = Type.Object({ data: TestResultSchema });

const DeadLetterSchema = Type.Object({
  id: Type.Integer(),
  generations: Type.Integer(),
  from: Type.String({ description: "Earliest created_at of its generations (for a replay)" }),
  to: Type.String({ description: "Latest created_at of its generations" }),
  attempts: Type.Integer(),
  last_error: Nullable(Type.String()),
  dead_at: Nullable(Type.String()),
});

export const DeliveryStatusSchema = Type.Object({
  destination_id: Type.String(),
  pending: Type.Integer({ description: "Generations waiting for delivery" }),
  delivered: Type.Integer({
    description: "Generations delivered (kept for BROADCAST_DELIVERED_RETENTION_MS)",
  }),
  dead: Type.Integer({ description: "Generations dead-lettered (kept for BROADCAST_DEAD_RETENTION_MS)" }),
  oldest_pending_age_ms: Nullable(Type.Integer()),
  last_success_at: Nullable(Type.String()),
  last_error: Nullable(Type.String()),
  last_error_at: Nullable(Type.String()),
  dropped_over_cap: Type.Integer({
    description: "Generations dead-lettered because the queue passed its cap",
  }),
  circuit: Type.Union([Type.Literal("closed"), Type.Literal("open"), Type.Literal("half_open")]),
  recent_dead_letters: Type.Array(DeadLetterSchema),
});
export const DeliveryStatusResponse = Type.Object({ data: DeliveryStatusSchema });

/** Unknown fields are ignored, as in every JSON body (docs/wire-compatibility.md "Validation rules"). */
export const ReplayBody = Type.Object({
  from: Type.String({ description: "RFC 3339: first created_at re-offered (inclusive)" }),
  to: Type.String({ description: "RFC 3339: end of the range (exclusive)" }),
});
export type ReplayBodyT = Static<typeof ReplayBody>;

export const ReplayResultResponse = Type.Object({
  data: Type.Object({
    destination_id: Type.String(),
    from: Type.String(),
    to: Type.String(),
    offered: Type.Integer({ description: "Generations of the range re-offered (selection then applies)" }),
    truncated: Type.Boolean(),
  }),
});
