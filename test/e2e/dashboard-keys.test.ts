/// <reference lib="dom" />
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiCall,
  axeViolations,
  browserUnavailable,
  launchBrowser,
  signedIn,
  startDemoServer,
  type DemoServer,
} from "../helpers/dashboard.js";
// The dashboard's own formatter: the page must show these exact strings.
import { usd } from "../../web/src/lib/format.js";

/**
 * The Keys page end to end: the real server on a small `gatehouse demo`, the real web build,
 * Debian's Chromium. Every change made in the browser is checked through the API (and, for
 * disable and delete, by authenticating with the key itself).
 */
const unavailable = browserUnavailable();
let server: DemoServer;
let context: BrowserContext;
let closeBrowser: () => Promise<void>;

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  apiCall(server, path, init);
const row = (page: Page, name: string) =>
  page.getByRole("row", { name: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} `) });
const keyRecord = async (hash: string): Promise<Record<string, unknown>> =>
  (await api(`/keys/${hash}`)).body.data as Record<string, unknown>;

/**
 * A generation of the key's, just now: the demo's activity spans the last days, so at the start of
 * a week or a month (Monday 00:00 UTC, the 1st) no key may have usage in the current window yet.
 */
let spent = 0;
async function spendNow(hash: string, usage: number, byok = 0): Promise<void> {
  spent += 1;
  const r = await api("/activity/generations", {
    method: "POST",
    body: {
      generations: [
        {
          id: `gen-e2e-keys-${spent}`,
          created_at: new Date(Date.now() - 1_000).toISOString(),
          api_key_hash: hash,
          model: "openai/gpt-4o",
          provider: "OpenAI",
          tokens_prompt: 100,
          tokens_completion: 20,
          latency_ms: 100,
          usage,
          ...(byok > 0 ? { byok_usage_inference: byok } : {}),
        },
      ],
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

async function newKey(body: Record<string, unknown>) {
  const created = await api("/keys", { method: "POST", body });
  expect(created.status).toBe(201);
  return created.body as { key: string; data: { hash: string } };
}

describe.skipIf(unavailable !== null)("Keys page in Chromium", () => {
  beforeAll(async () => {
    server = await startDemoServer({ generations: 600, days: 7 });
    ({ context, close: closeBrowser } = await launchBrowser());
  }, 300_000);

  afterAll(async () => {
    await closeBrowser?.();
    await server?.stop();
  });

  it("lists the keys of every workspace, or of one, with usage against the limit of the current window", async () => {
    const workspaces = (await api("/workspaces")).body.data as { id: string; name: string }[];
    const byWorkspace = new Map<string, any[]>();
    for (const w of workspaces)
      byWorkspace.set(
        w.id,
        (await api(`/keys?include_disabled=true&workspace_id=${w.id}`)).body.data as any[],
      );
    const all = [...byWorkspace.values()].flat();
    expect(workspaces.length).toBeGreaterThan(1);
    const used = all.find((k) => k.usage > 0);
    expect(used, "the demo has a key with usage").toBeDefined();
    await spendNow(used.hash, 0.25);
    await api(`/keys/${used.hash}`, { method: "PATCH", body: { limit: 100, limit_reset: "monthly" } });
    const limited = await keyRecord(used.hash);
    const page = await signedIn(context, server, "/keys");
    await page.getByRole("table", { name: /Keys/ }).waitFor();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(all.length);
    const text = await row(page, used.name).textContent();
    expect(text).toContain(`${usd(Number(limited.usage_monthly))} / ${usd(100)} monthly`);
    const meter = row(page, used.name).locator("meter");
    expect(Number(await meter.getAttribute("value"))).toBeCloseTo(
      Math.min(1, Number(limited.usage_monthly) / 100),
      9,
    );
    // A weekly window shows the weekly usage, not the all-time or monthly one.
    await api(`/keys/${used.hash}`, { method: "PATCH", body: { limit_reset: "weekly" } });
    await page.reload();
    const weekly = Number((await keyRecord(used.hash)).usage_weekly);
    await expect
      .poll(() => row(page, used.name).textContent())
      .toContain(`${usd(weekly)} / ${usd(100)} weekly`);

    // One workspace: exactly its keys.
    const [wsId, wsKeys] = [...byWorkspace.entries()].find(
      ([, ks]) => ks.length > 0 && ks.length < all.length,
    )!;
    await page.getByLabel("Show keys of").selectOption(wsId);
    await expect.poll(() => page.locator("tbody tr").count()).toBe(wsKeys.length);
    expect((await page.locator("tbody th[scope=row]").allTextContents()).sort()).toEqual(
      wsKeys.map((k) => String(k.name)).sort(),
    );
    await page.close();
  });

  it("counts the BYOK usage against the limit when the key includes it, as the API's limit_remaining does", async () => {
    const workspaces = (await api("/workspaces")).body.data as { id: string }[];
    const all: any[] = [];
    for (const w of workspaces)
      all.push(...((await api(`/keys?include_disabled=true&workspace_id=${w.id}`)).body.data as any[]));
    const byok = all.find((k) => k.byok_usage > 0 && k.usage > 0);
    expect(byok, "the demo has a key with BYOK usage").toBeDefined();
    await spendNow(byok.hash, 0.5, 0.75);
    const before = await keyRecord(byok.hash);
    await api(`/keys/${byok.hash}`, {
      method: "PATCH",
      body: { limit: 1000, limit_reset: "monthly", include_byok_in_limit: true },
    });
    const k = await keyRecord(byok.hash);
    const counted = 1000 - Number(k.limit_remaining);
    expect(counted).toBeCloseTo(Number(k.usage_monthly) + Number(k.byok_usage_monthly), 9);
    const page = await signedIn(context, server, "/keys");
    await page.getByRole("table", { name: /Keys/ }).waitFor();
    await expect
      .poll(() => row(page, byok.name).textContent())
      .toContain(`${usd(counted)} / ${usd(1000)} monthly (incl. ${usd(Number(k.byok_usage_monthly))} BYOK)`);
    const meter = row(page, byok.name).locator("meter");
    expect(Number(await meter.getAttribute("value"))).toBeCloseTo(counted / 1000, 9);
    await api(`/keys/${byok.hash}`, {
      method: "PATCH",
      body: {
        limit: before.limit,
        limit_reset: before.limit_reset,
        include_byok_in_limit: before.include_byok_in_limit,
      },
    });
    await page.close();
  });

  it("saves a key whose limit has more than two decimals (set through the API)", async () => {
    const { data } = await newKey({ name: "fine limit", limit: 12.345 });
    const page = await signedIn(context, server, "/keys");
    await row(page, "fine limit").getByRole("button", { name: "Edit fine limit" }).click();
    const form = page.getByRole("form", { name: "Edit fine limit" });
    expect(await form.getByLabel("Limit (USD, empty = none)").inputValue()).toBe("12.345");
    await form.getByLabel("Name").fill("fine limit renamed");
    await form.getByRole("button", { name: "Save" }).click();
    await row(page, "fine limit renamed").waitFor();
    expect(await keyRecord(data.hash)).toMatchObject({ name: "fine limit renamed", limit: 12.345 });
    // A new key's limit may have them too.
    await page.getByText("Create a key").click();
    await page.locator("#new-key-name").fill("tiny limit");
    await page.getByRole("form", { name: "New key" }).getByLabel("Limit (USD, empty = none)").fill("0.005");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.locator("#new-key").waitFor();
    await expect.poll(() => row(page, "tiny limit").textContent()).toContain(`/ ${usd(0.005)} total`);
    await page.close();
  });

  it("edits name, limit, reset, BYOK flag and expiry; clears the expiry", async () => {
    const { data } = await newKey({ name: "edit me", limit: 5, limit_reset: "daily" });
    const page = await signedIn(context, server, "/keys");
    await row(page, "edit me").getByRole("button", { name: "Edit edit me" }).click();
    const form = page.getByRole("form", { name: "Edit edit me" });
    await form.getByLabel("Name").fill("edited key");
    await form.getByLabel("Limit (USD, empty = none)").fill("42.5");
    await form.getByLabel("Limit resets").selectOption("weekly");
    await form.getByLabel("Count BYOK usage toward the limit").check();
    await form.getByLabel("Expires (UTC)").fill("2031-05-06T07:08:09");
    await form.getByRole("button", { name: "Save" }).click();
    await row(page, "edited key").waitFor();
    expect(await keyRecord(data.hash)).toMatchObject({
      name: "edited key",
      limit: 42.5,
      limit_reset: "weekly",
      include_byok_in_limit: true,
      expires_at: "2031-05-06T07:08:09.000Z",
      disabled: false,
    });
    expect(await row(page, "edited key").textContent()).toContain("2031-05-06 07:08:09 UTC");

    // Edit again: the form starts from the stored values; clearing the expiry and the limit.
    await row(page, "edited key").getByRole("button", { name: "Edit edited key" }).click();
    const again = page.getByRole("form", { name: "Edit edited key" });
    expect(await again.getByLabel("Expires (UTC)").inputValue()).toBe("2031-05-06T07:08:09");
    expect(await again.getByLabel("Limit (USD, empty = none)").inputValue()).toBe("42.5");
    await again.getByLabel("Expires (UTC)").fill("");
    await again.getByLabel("Limit (USD, empty = none)").fill("");
    await again.getByLabel("Count BYOK usage toward the limit").uncheck();
    await again.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => row(page, "edited key").textContent()).toContain("(no limit)");
    expect(await keyRecord(data.hash)).toMatchObject({
      limit: null,
      include_byok_in_limit: false,
      expires_at: null,
    });
    await page.close();
  });

  it("shows the server's expiry error under the form, marks the field, and changes nothing", async () => {
    const { data } = await newKey({ name: "past expiry" });
    const before = await keyRecord(data.hash);
    const page = await signedIn(context, server, "/keys");
    await row(page, "past expiry").getByRole("button", { name: "Edit past expiry" }).click();
    const form = page.getByRole("form", { name: "Edit past expiry" });
    await form.getByLabel("Name").fill("should not stick");
    await form.getByLabel("Expires (UTC)").fill("2001-01-01T00:00:00");
    await form.getByRole("button", { name: "Save" }).click();
    const alert = form.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe("expires_at: must be in the future");
    const field = form.getByLabel("Expires (UTC)");
    expect(await field.getAttribute("aria-invalid")).toBe("true");
    expect(await field.getAttribute("aria-describedby")).toContain((await alert.getAttribute("id")) ?? "-");
    expect(await form.getByLabel("Name").getAttribute("aria-invalid")).toBeNull();
    expect(await keyRecord(data.hash)).toEqual(before);
    await page.close();
  });

  it("disables and enables a key: the key is refused, then accepted again", async () => {
    const { key, data } = await newKey({ name: "toggle me" });
    const page = await signedIn(context, server, "/keys");
    await row(page, "toggle me").getByRole("button", { name: "Disable toggle me" }).click();
    await expect.poll(() => row(page, "toggle me").textContent()).toContain("Disabled");
    expect((await keyRecord(data.hash)).disabled).toBe(true);
    expect((await api("/key", { key })).status).toBe(401);
    expect(await page.getByRole("status").filter({ hasText: "toggle me disabled" }).count()).toBe(1);

    await row(page, "toggle me").getByRole("button", { name: "Enable toggle me" }).click();
    await expect.poll(() => row(page, "toggle me").textContent()).toContain("Enabled");
    expect((await keyRecord(data.hash)).disabled).toBe(false);
    expect((await api("/key", { key })).status).toBe(200);
    await page.close();
  });

  it("deletes only after confirmation; Cancel and Escape keep the key", async () => {
    const { key, data } = await newKey({ name: "doomed" });
    const page = await signedIn(context, server, "/keys");
    const del = row(page, "doomed").getByRole("button", { name: "Delete doomed" });
    const dialog = page.getByRole("dialog", { name: /Delete the key "doomed"/ });

    // Cancel.
    await del.click();
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await api(`/keys/${data.hash}`)).status).toBe(200);

    // By keyboard: Enter opens it with the focus on Cancel, Escape closes it and the focus returns.
    await del.focus();
    await page.keyboard.press("Enter");
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Delete doomed");
    expect((await api(`/keys/${data.hash}`)).status).toBe(200);

    // Confirm.
    await del.click();
    await dialog.getByRole("button", { name: "Delete key" }).click();
    await row(page, "doomed").waitFor({ state: "detached" });
    // The focus goes to the table, not back to the start of the page.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-label")))
      .toBe("Keys");
    expect(await page.getByRole("status").filter({ hasText: "doomed deleted" }).count()).toBe(1);
    expect((await api(`/keys/${data.hash}`)).status).toBe(404);
    expect((await api("/key", { key })).status).toBe(401);
    await page.close();
  });

  it("has no serious or critical accessibility violation, with a form and the dialog open", async () => {
    await newKey({ name: "axe key", limit: 3, expires_at: "2031-01-01T00:00:00Z" });
    const page = await signedIn(context, server, "/keys");
    await page.getByRole("table", { name: /Keys/ }).waitFor();
    const found: Record<string, string[]> = {};
    const check = async (state: string) => {
      const v = await axeViolations(page);
      if (v.length) found[state] = v;
    };
    await check("list");
    await page.getByText("Create a key").click();
    await check("create form open");
    await row(page, "axe key").getByRole("button", { name: "Edit axe key" }).click();
    await page.getByRole("form", { name: "Edit axe key" }).getByRole("button", { name: "Save" }).waitFor();
    await check("edit form open");
    await row(page, "axe key").getByRole("button", { name: "Delete axe key" }).click();
    await page.getByRole("dialog").waitFor();
    await check("delete dialog open");
    await page.keyboard.press("Escape");
    // A narrow screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await check("narrow");
    expect(found).toEqual({});
    await page.close();
  }, 120_000);

  it("shows the keys and budgets of every workspace when there are more than 100 (GET /workspaces pages by 100)", async () => {
    const have = Number((await api("/workspaces")).body.total_count);
    let last = "";
    for (let i = have; i <= 100; i++) {
      const ws = await api("/workspaces", { method: "POST", body: { name: `many ${i}`, slug: `many-${i}` } });
      expect(ws.status).toBe(201);
      last = ws.body.data.id as string;
    }
    expect(Number((await api("/workspaces")).body.total_count)).toBeGreaterThan(100);
    await newKey({ name: "key of the last workspace", workspace_id: last });
    const page = await signedIn(context, server, "/keys");
    await row(page, "key of the last workspace").waitFor();
    expect(await page.getByLabel("Show keys of").locator(`option[value="${last}"]`).count()).toBe(1);
    await page.goto(`${server.origin}/workspaces`);
    await page.getByRole("heading", { name: "many 100" }).waitFor();
    await page.close();
  }, 120_000);
});
