import { invalid, notFound } from "../errors.js";
import { keyHashesIn } from "../keys/key-repo.js";
import { resolveWorkspace } from "../workspaces/resolve-workspace.js";
import { findDefaultWorkspace } from "../workspaces/workspace-repo.js";
import { maskSecret } from "../destinations/mask.js";
import { HASH_RE, UUID_RE, newId } from "../../lib/ids.js";
import type { Clock } from "../../lib/clock.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Db } from "../../stores/record-store.js";
import {
  countByokForProvider,
  deleteByokRow,
  findByokRow,
  insertByokRow,
  listByokRows,
  updateByokRow,
  type ByokRow,
} from "./byok-repo.js";
import { toByokKey, type ByokKeyRecord } from "./byok-record.js";
import { BYOK_PROVIDER_SLUGS } from "./provider-slugs.js";

/** An organization's own provider credentials (SDK byok.*): encrypted at rest, masked on read. */
export interface ByokDeps {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  /** Whether the gateway's catalog configures a provider of this slug (accepted beside the SDK's). */
  isConfiguredProvider: (slug: string) => boolean;
  /** Called after every write (the routing cache forgets the organization). */
  changed: (organizationId: string) => void;
}

export interface ByokInput {
  provider?: string;
  key?: string;
  name?: string | null;
  workspace_id?: string;
  allowed_models?: string[] | null;
  allowed_user_ids?: string[] | null;
  allowed_api_key_hashes?: string[] | null;
  declared_zdr?: boolean | null;
  disabled?: boolean;
  is_fallback?: boolean;
  is_required?: boolean;
  is_byok_only?: boolean;
  sort_order?: number;
}

type Row = ByokRow;

async function checkHashes(
  db: Db,
  organizationId: string,
  hashes: string[] | null | undefined,
): Promise<void> {
  if (hashes === undefined || hashes === null) return;
  if (hashes.length === 0)
    throw invalid("allowed_api_key_hashes: must have at least one element, or be null");
  for (const [i, h] of hashes.entries()) {
    if (!HASH_RE.test(h)) throw invalid(`allowed_api_key_hashes[${i}]: must be 64 lowercase hex characters`);
  }
  const known = await keyHashesIn(db, organizationId, hashes, false);
  const missing = hashes.findIndex((h) => !known.has(h));
  if (missing >= 0)
    throw invalid(`allowed_api_key_hashes[${missing}]: no key of this organization has this hash`);
}

function checkCombination(isByokOnly: boolean, isFallback: boolean): void {
  if (isByokOnly && isFallback) throw invalid("is_byok_only: cannot be combined with is_fallback");
}

const json = (v: string[] | null | undefined) =>
  v === undefined ? undefined : v === null ? null : JSON.stringify(v);

export async function createByok(d: ByokDeps, organizationId: string, b: ByokInput): Promise<ByokKeyRecord> {
  const provider = b.provider as string;
  if (!BYOK_PROVIDER_SLUGS.has(provider) && !d.isConfiguredProvider(provider)) {
    throw invalid(`provider: ${provider} is not a known provider slug`);
  }
  const ws = b.workspace_id
    ? await resolveWorkspace(d.db, organizationId, b.workspace_id).catch(() => {
        throw invalid("workspace_id: no such workspace in this organization");
      })
    : await findDefaultWorkspace(d.db, organizationId);
  if (!ws) throw invalid("workspace_id: the default workspace was deleted; name a workspace");
  await checkHashes(d.db, organizationId, b.allowed_api_key_hashes);
  checkCombination(b.is_byok_only ?? false, b.is_fallback ?? false);
  const id = newId();
  const now = d.clock.now().toISOString();
  const secret = credentialOf(b.key as string);
  const row: Row = {
    id,
    organization_id: organizationId,
    workspace_id: ws.id,
    provider,
    name: b.name ?? null,
    label: maskSecret(secret),
    key_ciphertext: d.secretBox.seal(secret, id),
    disabled: b.disabled ? 1 : 0,
    is_fallback: b.is_fallback ? 1 : 0,
    is_required: b.is_required ? 1 : 0,
    is_byok_only: b.is_byok_only ? 1 : 0,
    declared_zdr: b.declared_zdr === undefined || b.declared_zdr === null ? null : b.declared_zdr ? 1 : 0,
    sort_order: b.sort_order ?? (await countByokForProvider(d.db, organizationId, ws.id, provider)),
    allowed_models: json(b.allowed_models) ?? null,
    allowed_user_ids: json(b.allowed_user_ids) ?? null,
    allowed_api_key_hashes: json(b.allowed_api_key_hashes) ?? null,
    created_at: now,
    updated_at: now,
  };
  await insertByokRow(d.db, row);
  d.changed(organizationId);
  return toByokKey(row);
}

async function findRow(db: Db, organizationId: string, id: string): Promise<Row> {
  // A malformed id names no record (404: docs/wire-compatibility.md "Validation rules"), and never
  // reaches the store (a NUL in a PostgreSQL text parameter is a driver error).
  if (!UUID_RE.test(id)) throw notFound("BYOK key");
  const r = await findByokRow(db, organizationId, id);
  if (!r) throw notFound("BYOK key");
  return r;
}

export async function getByok(d: ByokDeps, organizationId: string, id: string) {
  return toByokKey(await findRow(d.db, organizationId, id));
}

export async function listByok(
  d: ByokDeps,
  organizationId: string,
  q: { offset?: number | null; limit?: number; provider?: string; workspace_id?: string },
) {
  // Without workspace_id, the default workspace's keys (the SDK's byok.list contract), as create
  // puts a key there; a deleted default workspace is 400, as create's.
  const ws =
    q.workspace_id !== undefined
      ? await resolveWorkspace(d.db, organizationId, q.workspace_id).catch(() => {
          throw invalid("workspace_id: no such workspace in this organization");
        })
      : await findDefaultWorkspace(d.db, organizationId);
  if (!ws) throw invalid("workspace_id: the default workspace was deleted; name a workspace");
  const { rows, total } = await listByokRows(d.db, {
    organizationId,
    workspaceId: ws.id,
    ...(q.provider !== undefined ? { provider: q.provider } : {}),
    offset: q.offset ?? 0,
    limit: q.limit ?? 50,
  });
  return { data: rows.map(toByokKey), total_count: total };
}

/** C0 and C1 control characters and DEL. */
const CONTROL_RE = /\p{Cc}/u;
/** What an HTTP header value cannot carry besides controls (undici: \t, 0x20-0x7e, 0x80-0xff). */
const BEYOND_LATIN1_RE = /[\u0100-\uffff]/; // UTF-16 code units: astral characters too

/**
 * The credential as it will be sent: without surrounding whitespace. A key pasted with a trailing
 * newline was stored as sent, could not be sent as a header, and every request fell back to the
 * platform's key as if the provider were down. What is left must be a header value too: a control
 * character inside it (two keys pasted on two lines, a tab) or a character beyond U+00FF makes the
 * HTTP client refuse the header on every attempt, with the same silent fallback, so such a key is
 * refused here instead of stored.
 */
function credentialOf(key: string): string {
  const secret = key.trim();
  if (secret === "") throw invalid("key: must not be blank");
  if (CONTROL_RE.test(secret))
    throw invalid("key: must not contain control characters (it is sent as an HTTP header)");
  if (BEYOND_LATIN1_RE.test(secret))
    throw invalid("key: must not contain characters beyond U+00FF (it is sent as an HTTP header)");
  return secret;
}

export async function updateByok(d: ByokDeps, organizationId: string, id: string, b: ByokInput) {
  const row = await findRow(d.db, organizationId, id);
  await checkHashes(d.db, organizationId, b.allowed_api_key_hashes);
  checkCombination(
    b.is_byok_only ?? Number(row.is_byok_only) === 1,
    b.is_fallback ?? Number(row.is_fallback) === 1,
  );
  const patch: Partial<Row> = { updated_at: d.clock.now().toISOString() };
  if (b.key !== undefined) {
    const secret = credentialOf(b.key);
    patch.key_ciphertext = d.secretBox.seal(secret, id);
    patch.label = maskSecret(secret);
  }
  if (b.name !== undefined) patch.name = b.name;
  if (b.disabled !== undefined) patch.disabled = b.disabled ? 1 : 0;
  if (b.is_fallback !== undefined) patch.is_fallback = b.is_fallback ? 1 : 0;
  if (b.is_required !== undefined) patch.is_required = b.is_required ? 1 : 0;
  if (b.is_byok_only !== undefined) patch.is_byok_only = b.is_byok_only ? 1 : 0;
  if (b.declared_zdr !== undefined)
    patch.declared_zdr = b.declared_zdr === null ? null : b.declared_zdr ? 1 : 0;
  if (b.sort_order !== undefined) patch.sort_order = b.sort_order;
  if (b.allowed_models !== undefined) patch.allowed_models = json(b.allowed_models) ?? null;
  if (b.allowed_user_ids !== undefined) patch.allowed_user_ids = json(b.allowed_user_ids) ?? null;
  if (b.allowed_api_key_hashes !== undefined)
    patch.allowed_api_key_hashes = json(b.allowed_api_key_hashes) ?? null;
  await updateByokRow(d.db, organizationId, id, patch);
  d.changed(organizationId);
  return toByokKey({ ...row, ...patch });
}

export async function deleteByok(d: ByokDeps, organizationId: string, id: string) {
  await findRow(d.db, organizationId, id);
  await deleteByokRow(d.db, organizationId, id);
  d.changed(organizationId);
  return { deleted: true as const };
}
