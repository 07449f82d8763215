import type { LiveContext } from "../../broadcast/live-context.js";
import { insertGenerationContent } from "../../domain/generation-content/generation-content-repo.js";
import type { Policy } from "../../domain/policy/policy.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Db } from "../../stores/record-store.js";
import type { LiveOrigin } from "../recording/record-generation.js";
import { logsContent } from "./io-logging.js";
import { sealContent } from "./logged-content.js";

export interface ContentLoggerDeps {
  db: Db;
  /** Key and workspace policy from memory: what decides costs no store read once cached. */
  policy: Pick<Policy, "keyByHash" | "workspace">;
  secretBox: SecretBox;
}

/**
 * Content logging (docs/content-logging.md): told of each generation once its record is committed
 * (the recording's `onLive`), it stores the sealed prompt and completion of those its workspace's
 * IO logging settings keep. Off the request path: `onLive` returns at once, the work runs after
 * it, and a failure is reported to the listeners (the app logs it), never thrown: a generation
 * whose content could not be kept is still served and recorded.
 */
export class ContentLogger {
  private readonly pending = new Set<Promise<void>>();
  private readonly failureListeners: ((err: unknown, generationId: string) => void)[] = [];

  constructor(private readonly deps: ContentLoggerDeps) {}

  /** RecordingDeps["onLive"]. */
  readonly onLive = (organizationId: string, generationId: string, live: LiveContext, origin: LiveOrigin) => {
    const work: Promise<void> = this.keep(organizationId, generationId, live, origin)
      .catch((err: unknown) => this.failed(err, generationId))
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  };

  /** Listens for content that could not be stored. */
  onFailure(listener: (err: unknown, generationId: string) => void): void {
    this.failureListeners.push(listener);
  }

  /** Resolves once every content announced so far is stored or has failed. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private async keep(
    organizationId: string,
    generationId: string,
    live: LiveContext,
    origin: LiveOrigin,
  ): Promise<void> {
    const { db, policy, secretBox } = this.deps;
    const ws = await policy.workspace(origin.workspaceId);
    if (!ws?.ioLogging.enabled) return;
    // The key's numeric id only when a key list filters (the record names the key by hash); an
    // empty list keeps no key's, so it needs no lookup either.
    const ids = ws.ioLogging.apiKeyIds;
    const keyId =
      ids !== null && ids.length > 0 ? ((await policy.keyByHash(origin.keyHash))?.id ?? null) : null;
    if (!logsContent(ws.ioLogging, ws.id, keyId, live.sessionId, generationId)) return;
    const sealed = sealContent(secretBox, organizationId, generationId, {
      messages: live.input ?? [],
      completion: live.output,
    });
    await insertGenerationContent(db, {
      organizationId,
      id: generationId,
      workspaceId: origin.workspaceId,
      keyHash: origin.keyHash,
      createdAt: origin.createdAt.toISOString(),
      ciphertext: sealed,
    });
  }

  private failed(err: unknown, generationId: string): void {
    for (const listener of this.failureListeners) {
      try {
        listener(err, generationId);
      } catch {
        // the listener's own failure
      }
    }
  }
}
