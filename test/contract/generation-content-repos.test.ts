import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deleteGenerationContentBefore,
  findGenerationContent,
  insertGenerationContent,
} from "../../src/domain/generation-content/generation-content-repo.js";
import {
  countGenerationFeedback,
  insertGenerationFeedback,
} from "../../src/domain/generation-feedback/generation-feedback-repo.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

/** The content and feedback tables (migration 012) through their repositories, on both engines. */
for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`generation content and feedback repositories on ${f.name}`, () => {
    let store: Awaited<ReturnType<typeof f.open>>;
    beforeAll(async () => {
      store = await f.open();
    });
    afterAll(() => store?.dispose());

    const row = (organizationId: string, id: string, createdAt: string) => ({
      organizationId,
      id,
      workspaceId: "ws",
      keyHash: "h",
      createdAt,
      ciphertext: `sealed ${organizationId}/${id}`,
    });

    it("content: idempotent insert, found per organization within the retention, deleted before a cutoff", async () => {
      await insertGenerationContent(store.db, row("org-a", "gen-1", "2026-01-01T00:00:00.000Z"));
      await insertGenerationContent(store.db, {
        ...row("org-a", "gen-1", "2026-01-01T00:00:00.000Z"),
        ciphertext: "again",
      });
      await insertGenerationContent(store.db, row("org-b", "gen-1", "2026-01-20T00:00:00.000Z"));
      await insertGenerationContent(store.db, row("org-a", "gen-2", "2026-02-01T00:00:00.000Z"));

      const found = await findGenerationContent(store.db, "org-a", "gen-1", "2025-12-01T00:00:00.000Z");
      expect(found).toEqual(row("org-a", "gen-1", "2026-01-01T00:00:00.000Z"));
      expect(
        await findGenerationContent(store.db, "org-c", "gen-1", "2025-12-01T00:00:00.000Z"),
      ).toBeUndefined();
      // past the retention: not found even before the sweep
      expect(
        await findGenerationContent(store.db, "org-a", "gen-1", "2026-01-01T00:00:00.001Z"),
      ).toBeUndefined();

      expect(await deleteGenerationContentBefore(store.db, "2026-01-25T00:00:00.000Z")).toBe(2);
      expect(
        await findGenerationContent(store.db, "org-b", "gen-1", "2000-01-01T00:00:00.000Z"),
      ).toBeUndefined();
      expect(
        await findGenerationContent(store.db, "org-a", "gen-2", "2000-01-01T00:00:00.000Z"),
      ).toBeDefined();
    });

    it("feedback: every submission kept, counted per organization and generation", async () => {
      const base = {
        category: "other" as const,
        comment: null,
        keyHash: "h",
        createdAt: "2026-01-01T00:00:00.000Z",
      };
      await insertGenerationFeedback(store.db, {
        ...base,
        id: "f1",
        organizationId: "org-a",
        generationId: "gen-1",
      });
      await insertGenerationFeedback(store.db, {
        ...base,
        id: "f2",
        organizationId: "org-a",
        generationId: "gen-1",
        comment: "slow",
      });
      await insertGenerationFeedback(store.db, {
        ...base,
        id: "f3",
        organizationId: "org-b",
        generationId: "gen-1",
      });
      expect(await countGenerationFeedback(store.db, "org-a", "gen-1")).toBe(2);
      expect(await countGenerationFeedback(store.db, "org-b", "gen-1")).toBe(1);
      expect(await countGenerationFeedback(store.db, "org-a", "gen-2")).toBe(0);
    });
  });
}
