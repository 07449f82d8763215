import { openConfig } from "../../domain/destinations/destination-record.js";
import type { DestinationType } from "../../domain/destinations/destination-types.js";
import { requireDestinationRow } from "../../domain/destinations/get-destination.js";
import type { OutboundPolicy } from "../../lib/outbound-policy.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Db } from "../../stores/record-store.js";
import type { EncoderLookup } from "../delivery/broadcaster.js";
import { failureText } from "../delivery/failure-text.js";
import { sendRequest } from "../delivery/http-send.js";
import { maskErrorText } from "../delivery/mask-error.js";

export interface TestResult {
  /** The receiver accepted the test (2xx; for webhooks 400 too, as the hosted original counts it). */
  ok: boolean;
  /** HTTP status, or null when no answer came. */
  status: number | null;
  latency_ms: number;
  /**
   * What went wrong, null when ok: Gatehouse's classification (refused, timed out, TLS, DNS…) or
   * `HTTP <status>`, with a short masked excerpt of the body from a public receiver only.
   */
  error: string | null;
}

/**
 * Sends the destination type's test request now (encoder.testRequest; for webhooks an empty OTLP
 * payload with `X-Test-Connection: true`) and reports what the receiver said. Works on disabled
 * destinations too (checking a connection before enabling it is the point).
 */
export async function testDestination(
  db: Db,
  box: SecretBox,
  encoderFor: EncoderLookup,
  opts: { timeoutMs: number; addresses: OutboundPolicy },
  organizationId: string,
  id: string,
): Promise<TestResult> {
  const row = await requireDestinationRow(db, organizationId, id);
  const type = row.type as DestinationType;
  const encoder = encoderFor(type);
  if (encoder === undefined) {
    return { ok: false, status: null, latency_ms: 0, error: `no encoder for destination type ${type} yet` };
  }
  const config = openConfig(box, row);
  let res;
  // The headers sent: credentials the encoder derived from the config are masked in the error too.
  let sentHeaders: Record<string, string> = {};
  try {
    const request = encoder.testRequest(config);
    const signed = encoder.sign ? await encoder.sign(request, config, new Date()) : request;
    sentHeaders = signed.headers;
    res = await sendRequest(signed, opts);
  } catch (err) {
    return {
      ok: false,
      status: null,
      latency_ms: 0,
      error: maskErrorText(String(err), type, config, sentHeaders),
    };
  }
  const ok =
    res.status !== null &&
    ((res.status >= 200 && res.status < 300) || (type === "webhook" && res.status === 400));
  const mask = (text: string) => maskErrorText(text, type, config, sentHeaders);
  const error = ok ? null : mask(failureText(res, mask));
  return { ok, status: res.status, latency_ms: res.latencyMs, error };
}
