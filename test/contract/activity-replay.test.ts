import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActivityRow } from "../../src/activity/activity-row.js";
import type { ActivityStore, ReplayCursor } from "../../src/stores/activity-store.js";
import { ACTIVITY_STORE_FACTORIES, activityRow } from "../helpers/activity-stores.js";

const ORG = "00000000-0000-4000-8000-0000000000e1";
const OTHER_ORG = "00000000-0000-4000-8000-0000000000e2";
const WS = "00000000-0000-4000-8000-0000000000ea";
const OTHER_WS = "00000000-0000-4000-8000-0000000000eb";
const FROM = Date.parse("2026-11-18T10:00:00.000Z");
const TO = Date.parse("2026-11-18T11:00:00.000Z");

for (const f of ACTIVITY_STORE_FACTORIES) {
  describe.skipIf(f.skip)(`generationsForReplay on ${f.name}`, () => {
    let store: ActivityStore;
    beforeAll(async () => {
      store = await f.open();
    });
    afterAll(() => store?.close());

    /** Every page of [FROM, TO) in the workspace, `limit` rows a page. */
    async function allPages(limit: number): Promise<ActivityRow[][]> {
      const pages: ActivityRow[][] = [];
      let after: ReplayCursor | null = null;
      for (;;) {
        const page = await store.generationsForReplay(
          { organizationId: ORG, workspaceId: WS, fromMs: FROM, toMs: TO, after, limit },
          { timeoutMs: 10_000 },
        );
        if (page.length === 0) return pages;
        pages.push(page);
        const last = page[page.length - 1] as ActivityRow;
        after = { createdAtMs: last.created_at_ms, id: last.id };
      }
    }

    it("pages the workspace's generations of [from, to) by (created_at, id), as ActivityRows", async () => {
      const at = (ms: number, id: string, over: Partial<ActivityRow> = {}) =>
        activityRow({ organization_id: ORG, workspace_id: WS, id, created_at_ms: ms, ...over });
      const wanted = [
        at(FROM, "r-b"),
        at(FROM, "r-c", { workspace_id: null, usage_nano: 9_007_199_254_740_993n, is_byok: true }),
        at(FROM + 1, "r-a", { external_user: "ext", finish_reason: null }),
        at(FROM + 1, "r-d"),
        at(TO - 1, "r-e", { streamed: true, generation_time_ms: null, throughput: null }),
      ];
      const unwanted = [
        at(FROM - 1, "r-before"),
        at(TO, "r-at-to"),
        at(FROM + 5, "r-other-ws", { workspace_id: OTHER_WS }),
        activityRow({
          organization_id: OTHER_ORG,
          workspace_id: WS,
          id: "r-other-org",
          created_at_ms: FROM + 5,
        }),
      ];
      await store.insert([...unwanted, ...[...wanted].reverse()], []);

      const pages = await allPages(2);
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(pages.flat()).toEqual(wanted);

      const [one] = await allPages(10);
      expect(one).toEqual(wanted);
    });

    it("answers an empty page for a range with nothing in it", async () => {
      const page = await store.generationsForReplay(
        { organizationId: ORG, workspaceId: WS, fromMs: TO + 1, toMs: TO + 2, after: null, limit: 10 },
        { timeoutMs: 10_000 },
      );
      expect(page).toEqual([]);
    });
  });
}
