import type { Updateable } from "kysely";
import type { Clock } from "../../lib/clock.js";
import type { OutboundPolicy } from "../../lib/outbound-policy.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { DestinationsTable } from "../../stores/schema.js";
import { normalizeApiKeyHashes } from "./api-key-hashes.js";
import type { DestinationType } from "./destination-types.js";
import { checkName, type UpdateDestinationInput } from "./destination-input.js";
import { updateDestinationRow } from "./destination-repo.js";
import { openConfig, sealConfig, toDestination, type Destination } from "./destination-record.js";
import { normalizeFilterRules } from "./filter-rules.js";
import { requireDestinationRow } from "./get-destination.js";
import { mergeConfig } from "./merge-config.js";
import { refusePrivateUrls } from "./validate-config.js";
import { normalizeRegions } from "./regions.js";

const flag = (v: boolean | undefined): number | undefined => (v === undefined ? undefined : v ? 1 : 0);

/**
 * Partial update: only the fields sent change (see merge-config.ts for `config`). Every field is
 * validated before anything is written, so a request with one bad field changes nothing (a
 * config whose URL fields name a literal address `addresses` refuses is a 400). The row
 * is read, merged and written in one transaction (locked where supported). `updated_at` is set on
 * every successful update.
 */
export async function updateDestination(
  store: RecordStore,
  clock: Clock,
  box: SecretBox,
  organizationId: string,
  id: string,
  input: UpdateDestinationInput,
  addresses: OutboundPolicy,
): Promise<Destination> {
  if (input.name !== undefined) checkName(input.name);
  return store.transaction(async (trx) => {
    const row = await requireDestinationRow(trx, organizationId, id, store.caps.supportsForUpdate);
    const type = row.type as DestinationType;
    const changes: Updateable<DestinationsTable> = {
      name: input.name,
      enabled: flag(input.enabled),
      privacy_mode: flag(input.privacy_mode),
      broadcast_generation_cost: flag(input.broadcast_generation_cost),
      broadcast_generation_identity: flag(input.broadcast_generation_identity),
      broadcast_generation_request_context: flag(input.broadcast_generation_request_context),
      sampling_rate: input.sampling_rate,
      updated_at: clock.now().toISOString(),
    };
    if (input.config !== undefined) {
      const merged = mergeConfig(type, openConfig(box, row), input.config);
      refusePrivateUrls(type, merged, addresses);
      changes.config_ciphertext = sealConfig(box, row.id, merged);
    }
    if (input.filter_rules !== undefined) {
      changes.filter_rules =
        input.filter_rules === null ? null : JSON.stringify(normalizeFilterRules(input.filter_rules));
    }
    if (input.regions !== undefined) changes.regions = JSON.stringify(normalizeRegions(input.regions));
    if (input.api_key_hashes !== undefined) {
      const hashes = await normalizeApiKeyHashes(trx, organizationId, input.api_key_hashes);
      changes.api_key_hashes = hashes === null ? null : JSON.stringify(hashes);
    }
    const defined = Object.fromEntries(
      Object.entries(changes).filter(([, v]) => v !== undefined),
    ) as Updateable<DestinationsTable>;
    await updateDestinationRow(trx, row.id, defined);
    return toDestination(box, { ...row, ...defined });
  });
}
