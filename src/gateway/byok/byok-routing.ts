import { enabledByokRows } from "../../domain/byok/byok-repo.js";
import { DomainError } from "../../domain/errors.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Db } from "../../stores/record-store.js";
import type { Attempt } from "../chat/attempts.js";

interface Credential {
  id: string;
  workspaceId: string;
  provider: string;
  /**
   * null: the stored key cannot be decrypted (the data key changed, the row was damaged). It
   * serves nothing, but a byok-only one still keeps the platform's credential out.
   */
  secret: string | null;
  isFallback: boolean;
  exclusive: boolean;
  sortOrder: number;
  /** ISO time of creation: the order among equal sort_orders. */
  createdAt: string;
  allowedModels: Set<string> | null;
  allowedKeyHashes: Set<string> | null;
  allowedUsers: Set<string> | null;
}

/** How long an instance serves an organization's BYOK keys from memory (writes here forget at once). */
export const BYOK_CACHE_MS = 1_000;

const set = (v: string | null) => (v === null ? null : new Set(JSON.parse(v) as string[]));

/**
 * Which of an organization's own provider keys an attempt may use, read at most once per
 * BYOK_CACHE_MS per organization and instance (so a change applies on another instance within
 * that bound), decrypted once per read.
 */
export class ByokRouting {
  private readonly cache = new Map<string, { at: number; creds: Credential[] }>();
  /**
   * Counts `forget` calls: a read that started before one may hold the rows from before the write
   * (on PostgreSQL, a read on another pooled connection can finish after the write's commit), so
   * it serves its own request but is not cached.
   */
  private forgets = 0;
  private readonly warnings: ((message: string) => void)[] = [];
  constructor(
    private readonly db: Db,
    private readonly secretBox: SecretBox,
  ) {}

  /** Where an unreadable key is reported (the app's logger): once per read of the organization. */
  onWarning(listener: (message: string) => void): void {
    this.warnings.push(listener);
  }

  /** The stored key, or null when it cannot be decrypted (reported, never thrown: see Credential). */
  private open(id: string, organizationId: string, sealed: string): string | null {
    try {
      // Trimmed: keys stored before create/update trimmed them may end in a pasted newline.
      return this.secretBox.open(sealed, id).trim();
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      for (const w of this.warnings)
        w(
          `BYOK key ${id} of organization ${organizationId} cannot be decrypted (${why}): it is not used; was GATEHOUSE_ENCRYPTION_KEY changed?`,
        );
      return null;
    }
  }

  forget(organizationId: string): void {
    this.forgets++;
    this.cache.delete(organizationId);
  }

  private async credentials(organizationId: string): Promise<Credential[]> {
    const hit = this.cache.get(organizationId);
    if (hit && Date.now() - hit.at < BYOK_CACHE_MS) return hit.creds;
    const forgets = this.forgets;
    const rows = await enabledByokRows(this.db, organizationId);
    const creds = rows.map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      provider: r.provider,
      secret: this.open(r.id, organizationId, r.key_ciphertext),
      isFallback: Number(r.is_fallback) === 1,
      exclusive: Number(r.is_byok_only) === 1 || Number(r.is_required) === 1,
      sortOrder: Number(r.sort_order),
      createdAt: r.created_at,
      allowedModels: set(r.allowed_models),
      allowedKeyHashes: set(r.allowed_api_key_hashes),
      allowedUsers: set(r.allowed_user_ids),
    }));
    // Equal sort_order (two keys created at once both take the count as theirs): the older first.
    creds.sort(
      (a, b) =>
        a.sortOrder - b.sortOrder ||
        (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1),
    );
    if (forgets !== this.forgets) return creds;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(organizationId, { at: Date.now(), creds });
    return creds;
  }

  /**
   * Each attempt expanded with the caller's usable BYOK keys for its provider, in sort_order:
   * keys not marked is_fallback first, then the platform's own credential (unless a key is
   * is_byok_only or is_required), then the is_fallback keys.
   */
  async expand(
    attempts: readonly Attempt[],
    who: { organizationId: string; workspaceId: string; keyHash: string; creatorUserId: string | null },
  ): Promise<Attempt[]> {
    const all = await this.credentials(who.organizationId);
    if (all.length === 0) return [...attempts];
    const out: Attempt[] = [];
    /** A required key that cannot be decrypted and left an attempt with no credential at all. */
    let blocked: Credential | null = null;
    for (const a of attempts) {
      const usable = all.filter(
        (c) =>
          c.provider === a.provider.slug &&
          c.workspaceId === who.workspaceId &&
          (!c.allowedModels || c.allowedModels.has(a.model.id)) &&
          (!c.allowedKeyHashes || c.allowedKeyHashes.has(who.keyHash)) &&
          (!c.allowedUsers || (who.creatorUserId !== null && c.allowedUsers.has(who.creatorUserId))),
      );
      const withKey = (c: Credential): Attempt[] =>
        c.secret === null ? [] : [{ ...a, byok: { id: c.id, secret: c.secret } }];
      out.push(...usable.filter((c) => !c.isFallback).flatMap(withKey));
      if (!usable.some((c) => c.exclusive)) out.push(a);
      out.push(...usable.filter((c) => c.isFallback).flatMap(withKey));
      if (!usable.some((c) => c.secret !== null) && usable.some((c) => c.exclusive))
        blocked ??= usable.find((c) => c.exclusive && c.secret === null) ?? null;
    }
    if (out.length === 0 && blocked) {
      throw new DomainError(
        "service_unavailable",
        `The organization's own key for provider ${blocked.provider} (BYOK ${blocked.id}) is required for this request but cannot be decrypted; an administrator must set it again (PATCH /api/v1/byok/${blocked.id} with the key)`,
        { error_type: "byok_key_unreadable", byok_id: blocked.id, provider: blocked.provider },
      );
    }
    return out;
  }
}
