import { openConfig } from "../../domain/destinations/destination-record.js";
import type { DestinationType } from "../../domain/destinations/destination-types.js";
import type { DestinationConfig } from "../../domain/destinations/validate-config.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { GenerationFlags } from "../broadcast-generation.js";
import type { BroadcastGeneration } from "../encoders/encoder.js";
import type { ClaimedDelivery, ClaimedDestination } from "../outbox/claims-repo.js";
import type { BatchCache } from "./batch-cache.js";
import { loadGenerations, type DecodedBatch } from "./load-generations.js";
import { errorMasker, type ErrorMasker } from "./mask-error.js";
import type { Failure } from "./outcomes.js";

/**
 * The claim stage of a delivery (claim → encode → send → outcomes → settle): what a claim of a
 * destination's rows holds once opened: the destination's config (decrypted here, at send time,
 * and only held for this claim), its flags, and the claimed generations read from the outbox.
 */
export interface OpenedClaim {
  destination: ClaimedDestination;
  type: DestinationType;
  rows: ClaimedDelivery[];
  /** The lease token the rows are held by (each claim has its own). */
  lease: string;
  config: DestinationConfig;
  generations: BroadcastGeneration[];
  /** The outbox could not be read: the whole claim failed before encoding. */
  failure: Failure | null;
  masker: ErrorMasker;
}

export interface ClaimDeps {
  store: RecordStore;
  secretBox: SecretBox;
  cache: BatchCache<DecodedBatch>;
}

export async function openClaim(
  deps: ClaimDeps,
  destination: ClaimedDestination,
  rows: ClaimedDelivery[],
  lease: string,
): Promise<OpenedClaim> {
  const type = destination.type as DestinationType;
  const config = openConfig(deps.secretBox, {
    id: destination.id,
    config_ciphertext: destination.configCiphertext,
  });
  const flags: GenerationFlags = {
    privacyMode: destination.privacyMode,
    cost: destination.cost,
    identity: destination.identity,
    requestContext: destination.requestContext,
  };
  const claim = { destination, type, rows, lease, config, masker: errorMasker(type, config) };
  try {
    const generations = await loadGenerations(
      deps.store,
      deps.cache,
      destination.organizationId,
      rows,
      flags,
    );
    return { ...claim, generations, failure: null };
  } catch (err) {
    return {
      ...claim,
      generations: [],
      failure: { text: `outbox: ${String(err)}`, retry: false, retryAfterMs: null },
    };
  }
}
