import type { Clock } from "../../lib/clock.js";
import type { OutboundPolicy } from "../../lib/outbound-policy.js";
import { newId } from "../../lib/ids.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { RecordStore } from "../../stores/record-store.js";
import { conflict, invalid } from "../errors.js";
import { normalizeApiKeyHashes } from "./api-key-hashes.js";
import { isDestinationType, DESTINATION_TYPE_NAMES } from "./destination-types.js";
import { checkName, type CreateDestinationInput } from "./destination-input.js";
import {
  countDestinations,
  insertDestination,
  type DestinationRow,
  MAX_DESTINATIONS_PER_TYPE,
} from "./destination-repo.js";
import { sealConfig, toDestination, type Destination } from "./destination-record.js";
import { normalizeFilterRules } from "./filter-rules.js";
import { DEFAULT_REGIONS, normalizeRegions } from "./regions.js";
import { requireWorkspaceForField } from "../workspaces/resolve-workspace.js";
import { refusePrivateUrls, validateConfig } from "./validate-config.js";

/**
 * Creates a destination. Everything is validated before the write (URL fields naming a literal
 * address `addresses` refuses are a 400); the per-type cap (5 live
 * destinations of one type per workspace) is checked and the row inserted in one transaction that
 * locks the workspace row, so concurrent creates cannot exceed the cap.
 */
export async function createDestination(
  store: RecordStore,
  clock: Clock,
  box: SecretBox,
  organizationId: string,
  input: CreateDestinationInput,
  addresses: OutboundPolicy,
): Promise<Destination> {
  const type = input.type;
  if (!isDestinationType(type)) throw invalid(`type: must be one of ${DESTINATION_TYPE_NAMES.join(", ")}`);
  checkName(input.name);
  const config = validateConfig(type, input.config);
  refusePrivateUrls(type, config, addresses);
  const filterRules = input.filter_rules ? normalizeFilterRules(input.filter_rules) : null;
  const regions = input.regions === undefined ? DEFAULT_REGIONS : normalizeRegions(input.regions);
  const hashes = await normalizeApiKeyHashes(store.db, organizationId, input.api_key_hashes);
  const id = newId();
  const at = clock.now().toISOString();

  const row = await store.transaction(async (trx): Promise<DestinationRow> => {
    const workspaceId = await requireWorkspaceForField(
      trx,
      store.caps,
      organizationId,
      input.workspace_id,
      "update",
    );
    const live = await countDestinations(trx, workspaceId, type);
    if (live >= MAX_DESTINATIONS_PER_TYPE) {
      throw conflict(
        `A workspace can have at most ${MAX_DESTINATIONS_PER_TYPE} destinations of type ${type}; delete one first`,
      );
    }
    const inserted: DestinationRow = {
      id,
      organization_id: organizationId,
      workspace_id: workspaceId,
      type,
      name: input.name,
      enabled: (input.enabled ?? true) ? 1 : 0,
      privacy_mode: input.privacy_mode ? 1 : 0,
      broadcast_generation_cost: input.broadcast_generation_cost ? 1 : 0,
      broadcast_generation_identity: input.broadcast_generation_identity ? 1 : 0,
      broadcast_generation_request_context: input.broadcast_generation_request_context ? 1 : 0,
      sampling_rate: input.sampling_rate ?? 1,
      api_key_hashes: hashes === null ? null : JSON.stringify(hashes),
      filter_rules: filterRules === null ? null : JSON.stringify(filterRules),
      regions: JSON.stringify(regions),
      config_ciphertext: sealConfig(box, id, config),
      created_at: at,
      updated_at: at,
      deleted_at: null,
    };
    await insertDestination(trx, inserted);
    return inserted;
  });
  return toDestination(box, row);
}
