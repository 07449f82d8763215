import type { OutboundPolicy } from "../../lib/outbound-policy.js";
import type { DestinationEncoder, EncodedRequest } from "../encoders/encoder.js";
import type { OpenedClaim } from "./claim.js";
import { failureText } from "./failure-text.js";
import { sendRequest } from "./http-send.js";
import { newTally, shouldSend, tallyRequest, type RequestResult, type Tally } from "./outcomes.js";

export interface SendDeps {
  encoder: DestinationEncoder;
  attemptTimeoutMs: number;
  addresses: OutboundPolicy;
  /** The claim's lease length: no request starts once an attempt could outlast it. */
  leaseMs: number;
  now(): number;
  /** One request ended: its HTTP status, or null when there was no answer. */
  sent(status: number | null): void;
}

/**
 * The send stage of a delivery (claim → encode → send → outcomes → settle): the requests in
 * order, each unless what came before rules it out (outcomes.ts shouldSend: the claim stopped,
 * or it carries a generation the receiver refused) or the lease could run out during it.
 * Resolves to the tally of the results (outcomes.ts), from which the outcomes stage decides.
 */
export async function sendClaim(
  deps: SendDeps,
  claim: OpenedClaim,
  requests: readonly EncodedRequest[],
  startedMs: number,
): Promise<Tally> {
  const tally = newTally();
  const everyId = claim.generations.map((g) => g.id);
  const describe = (r: Parameters<typeof failureText>[0]) =>
    failureText(r, (text) => claim.masker.mask(text));
  for (const req of requests) {
    const carried = req.generationIds ?? everyId;
    const leaseOut = tally.stop === null && deps.now() - startedMs > deps.leaseMs - deps.attemptTimeoutMs;
    let result: RequestResult;
    if (leaseOut) result = "lease ran out";
    else if (!shouldSend(tally, carried)) result = "not sent";
    else result = await sendOne(deps, claim, req);
    tallyRequest(tally, carried, result, describe);
  }
  return tally;
}

async function sendOne(deps: SendDeps, claim: OpenedClaim, req: EncodedRequest) {
  const { encoder } = deps;
  // Signing (S3's SigV4) happens per send: the signature covers the send time.
  const signed = encoder.sign ? await encoder.sign(req, claim.config, new Date(deps.now())) : req;
  claim.masker.saw(signed.headers);
  const res = await sendRequest(signed, { timeoutMs: deps.attemptTimeoutMs, addresses: deps.addresses });
  deps.sent(res.status);
  return res;
}
