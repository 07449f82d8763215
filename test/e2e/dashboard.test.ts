/// <reference lib="dom.iterable" />
/// <reference lib="dom" />
import { readFileSync } from "node:fs";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiCall,
  axeViolations,
  browserUnavailable,
  launchBrowser,
  signedIn as signIn,
  startDemoServer,
  type DemoServer,
} from "../helpers/dashboard.js";
// The dashboard's own formatters: the page must show these exact strings.
import { usd, utc } from "../../web/src/lib/format.js";

/**
 * The dashboard end to end: the real server (a small `gatehouse demo`), the real web build, Debian's
 * Chromium. One server and one browser for the file; each test opens its own tab (a tab is a fresh
 * sessionStorage, so a fresh sign-in).
 */
const unavailable = browserUnavailable();
let server: DemoServer;
let context: BrowserContext;
let closeBrowser: () => Promise<void>;
let paths: Record<string, unknown> = {};

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  apiCall(server, path, init);
const signedIn = (path = "/"): Promise<Page> => signIn(context, server, path);

describe.skipIf(unavailable !== null)("dashboard in Chromium", () => {
  beforeAll(async () => {
    server = await startDemoServer({ generations: 2000, days: 14 });
    ({ context, close: closeBrowser } = await launchBrowser());
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.origin });
    paths = (
      (await (await fetch(`${server.origin}/api/v1/openapi.json`)).json()) as {
        paths: Record<string, unknown>;
      }
    ).paths;
  }, 300_000);

  afterAll(async () => {
    await closeBrowser?.();
    await server?.stop();
  });

  it("serves the page with a strict CSP; API errors stay JSON", async () => {
    const res = await fetch(`${server.origin}/keys`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const missing = await fetch(`${server.origin}/api/v1/nope`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: number } }).error.code).toBe(404);
  });

  it("signs in, keeps the key in sessionStorage only, and signs out", async () => {
    const page = await context.newPage();
    await page.goto(server.origin);
    await page.getByLabel("Management key").fill("not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Sign-in failed");

    await page.getByLabel("Management key").fill(server.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const storage = await page.evaluate(() => ({
      session: Object.values(sessionStorage),
      local: Object.keys(localStorage).length,
      cookie: document.cookie,
    }));
    expect(storage).toEqual({ session: [server.key], local: 0, cookie: "" });
    // A CSP violation would be reported here: none while the overview draws.
    await page.locator(".chart").nth(2).waitFor();

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Management key").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
  });

  it("creates a key, shows it once and copies it", async () => {
    const page = await signedIn("/keys");
    await page.getByText("Create a key").click();
    await page.locator("#new-key-name").fill("e2e key");
    await page.getByRole("form", { name: "New key" }).getByLabel("Limit (USD, empty = none)").fill("12.5");
    await page.getByRole("button", { name: "Create key" }).click();
    const shown = (await page.locator("#new-key").textContent()) ?? "";
    expect(shown.length).toBeGreaterThan(20);
    await page.getByRole("button", { name: "Copy key" }).click();
    await page.getByText("Copied").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown);
    // The copied key is a working key, and the list shows it with its limit.
    expect((await api("/key", { key: shown })).status).toBe(200);
    await expect.poll(() => page.getByRole("row", { name: /e2e key/ }).textContent()).toContain("$12.50");
    await page.close();
  });

  it("sets budgets and shows the server's ordering error inline", async () => {
    const page = await signedIn("/workspaces");
    const ws = page.getByRole("article").first();
    const daily = ws.getByRole("form", { name: /daily budget/ });
    await daily.getByLabel("Limit (USD)").fill("50");
    await daily.getByRole("button", { name: "Save daily" }).click();
    await expect.poll(() => daily.textContent()).toContain("Remaining");
    const weekly = ws.getByRole("form", { name: /weekly budget/ });
    await weekly.getByLabel("Limit (USD)").fill("10");
    await weekly.getByRole("button", { name: "Save weekly" }).click();
    const alert = weekly.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(
      /^limit_usd: the weekly budget must be .*daily budget \(50 USD\)/,
    );
    await expect.poll(async () => weekly.getByLabel("Limit (USD)").getAttribute("aria-invalid")).toBe("true");

    // Removing a budget asks first: Cancel keeps it, confirming removes it.
    const remove = ws.getByRole("button", { name: /^Remove .* daily budget$/ });
    const dialog = page.getByRole("dialog", { name: /Remove the daily budget of/ });
    await remove.click();
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect(await daily.textContent()).toContain("Remaining");
    await remove.click();
    await dialog.getByRole("button", { name: "Remove daily budget" }).click();
    await expect.poll(() => daily.textContent()).toContain("No budget.");
    await page.close();
  });

  it("saves budgets and sampling rates with more than two decimals", async () => {
    const ws = await api("/workspaces", { method: "POST", body: { name: "e2e decimals", slug: "e2e-dec" } });
    expect(ws.status).toBe(201);
    expect(
      (await api("/workspaces/e2e-dec/budgets/monthly", { method: "PUT", body: { limit_usd: 150.555 } }))
        .status,
    ).toBe(200);
    const page = await signedIn("/workspaces");
    const card = page.getByRole("article", { name: /e2e decimals/ });
    const monthly = card.getByRole("form", { name: /monthly budget/ });
    await expect.poll(() => monthly.getByLabel("Limit (USD)").inputValue()).toBe("150.555");
    await monthly.getByLabel("Limit (USD)").fill("99.995");
    await monthly.getByRole("button", { name: "Save monthly" }).click();
    await expect
      .poll(
        async (): Promise<unknown> => (await api("/workspaces/e2e-dec/budgets/monthly")).body.data.limit_usd,
      )
      .toBe(99.995);

    const made = await api("/observability/destinations", {
      method: "POST",
      body: {
        name: "e2e eighth",
        type: "webhook",
        sampling_rate: 0.125,
        config: { url: "https://hooks.example.com/s" },
      },
    });
    expect(made.status).toBe(201);
    await page.goto(`${server.origin}/destinations`);
    const dest = page.getByRole("article", { name: /e2e eighth/ });
    await dest.getByRole("button", { name: "Edit e2e eighth" }).click();
    const form = dest.getByRole("form", { name: "Edit e2e eighth" });
    await form.getByLabel("Name").fill("e2e eighth renamed");
    await form.getByRole("button", { name: "Save destination" }).click();
    await form.waitFor({ state: "detached" });
    expect((await api(`/observability/destinations/${made.body.data.id}`)).body.data).toMatchObject({
      name: "e2e eighth renamed",
      sampling_rate: 0.125,
    });
    await page.close();
  });

  it("runs an analytics query whose chart and table equal the API's answer", async () => {
    const end = String(server.summary.period && (server.summary.period as { end: string }).end);
    const endS = new Date(Math.ceil(Date.parse(end) / 86_400_000) * 86_400_000)
      .toISOString()
      .replace(/\.\d+Z$/, "Z");
    const startS = new Date(Date.parse(endS) - 10 * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");
    const query = {
      metrics: ["total_usage", "request_count"],
      granularity: "day",
      time_range: { start: startS, end: endS },
    };
    const page = await signedIn(`/analytics?q=${encodeURIComponent(JSON.stringify(query))}`);
    await page.getByRole("table", { name: "Result rows" }).waitFor();
    const answer = (await api("/analytics/query", { method: "POST", body: query })).body.data;
    expect(answer.data.length).toBeGreaterThan(3);

    // The exact query is shown.
    expect(JSON.parse((await page.locator("#query-json").textContent()) ?? "")).toEqual(query);
    // Table: every row's raw values equal the API's rows, in order.
    const table = await page
      .getByRole("table", { name: "Result rows" })
      .evaluate((t) =>
        [...t.querySelectorAll("tbody tr")].map((tr) =>
          Object.fromEntries(
            [...tr.querySelectorAll("td")].map((td): [string, string] => [
              td.dataset.col ?? "",
              td.dataset.value ?? "",
            ]),
          ),
        ),
      );
    expect(table).toEqual(
      answer.data.map((r: Record<string, unknown>) => ({
        date__day: String(r.date__day),
        total_usage: String(r.total_usage),
        request_count: String(r.request_count),
      })),
    );
    // Chart: the plotted points are the API's buckets and values of the first metric.
    const points = JSON.parse((await page.locator(".result figure").getAttribute("data-points")) ?? "{}");
    const sorted = [...answer.data].sort(
      (a: any, b: any) => Date.parse(a.date__day) - Date.parse(b.date__day),
    );
    expect(points.x).toEqual(sorted.map((r: any) => Date.parse(r.date__day) / 1000));
    expect(points.series[0].values).toEqual(sorted.map((r: any) => Number(r.total_usage)));
    // uPlot drew into a canvas of the figure.
    expect(await page.locator(".result figure canvas").count()).toBeGreaterThan(0);
    expect(await page.locator("#truncated").count()).toBe(answer.metadata.truncated ? 1 : 0);

    // CSV export downloads the same rows.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    const csv = readFileSync((await download.path()) ?? "", "utf8").split("\r\n");
    expect(csv[0]).toBe("date__day,total_usage,request_count");
    expect(csv.length).toBe(answer.data.length + 1);
    await page.close();
  });

  it("runs the query again when Run is pressed with the query unchanged", async () => {
    const page = await signedIn("/analytics");
    await page.getByRole("table", { name: "Result rows" }).waitFor();
    let sent = 0;
    page.on("request", (r) => {
      if (r.url().endsWith("/api/v1/analytics/query")) sent++;
    });
    const entries = await page.evaluate(() => history.length);
    await page.getByRole("button", { name: "Run query" }).click();
    await expect.poll(() => sent).toBe(1);
    await page.getByRole("button", { name: "Run query" }).waitFor();
    // The same query is not a new page: Back still leaves the explorer's previous state.
    expect(await page.evaluate(() => history.length)).toBe(entries);
    await page.close();
  });

  it("shows a readable error when the answer is not the API's JSON (a proxy's error page)", async () => {
    const page = await signedIn("/");
    await page.route("**/api/v1/workspaces**", (route) =>
      route.fulfill({
        status: 502,
        contentType: "text/html",
        body: "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
      }),
    );
    await page.goto(`${server.origin}/keys`);
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      "HTTP 502: the answer is not from the Gatehouse API (a proxy's error page?)",
    );
    await page.close();
  });

  it("creates a destination and shows its secret masked", async () => {
    const secret = "dd-api-key-0123456789-abcdef";
    const page = await signedIn("/destinations");
    await page.getByText("Add a destination").click();
    const form = page.getByRole("form", { name: "New destination" });
    await form.getByLabel("Type").selectOption("datadog");
    await form.locator("#new-name").fill("e2e datadog");
    await form.locator("#new-cfg-apiKey").fill(secret);
    await form.locator("#new-cfg-mlApp").fill("e2e-app");
    await form.getByRole("button", { name: "Create destination" }).click();
    const card = page.getByRole("article", { name: /e2e datadog/ });
    await card.waitFor();
    expect(await card.locator('dd[data-field="apiKey"]').textContent()).toBe("dd-a...cdef");
    expect(await card.locator('dd[data-field="url"]').textContent()).toBe("https://api.datadoghq.com");
    expect(await page.content()).not.toContain(secret);
    const list = (await api("/observability/destinations")).body.data;
    expect(list.find((d: any) => d.name === "e2e datadog")?.config.apiKey).toBe("dd-a...cdef");
    await page.close();
  });

  it("offers in a destination's key allowlist the keys of its workspace only", async () => {
    const ws = await api("/workspaces", {
      method: "POST",
      body: { name: "e2e allowlist", slug: "e2e-allow" },
    });
    expect(ws.status).toBe(201);
    const wsId = ws.body.data.id as string;
    const inWs = await api("/keys", { method: "POST", body: { name: "e2e allow in", workspace_id: wsId } });
    const inDefault = await api("/keys", { method: "POST", body: { name: "e2e allow default" } });
    expect([inWs.status, inDefault.status]).toEqual([201, 201]);
    const page = await signedIn("/destinations");
    await page.getByText("Add a destination").click();
    const form = page.getByRole("form", { name: "New destination" });
    const allowlist = form.getByRole("group", { name: /Key allowlist/ });
    await allowlist.getByLabel("e2e allow default").waitFor();
    expect(await allowlist.getByLabel("e2e allow in").count()).toBe(0);
    await form.getByLabel("Workspace").selectOption(wsId);
    await allowlist.getByLabel("e2e allow in").check();
    expect(await allowlist.getByLabel("e2e allow default").count()).toBe(0);
    await form.getByLabel("Type").selectOption("webhook");
    await form.locator("#new-name").fill("e2e allow hook");
    await form.locator("#new-cfg-url").fill("https://hooks.example.com/allow");
    await form.getByRole("button", { name: "Create destination" }).click();
    await page.getByRole("article", { name: /e2e allow hook/ }).waitFor();
    const list = (await api(`/observability/destinations?workspace_id=${wsId}`)).body.data as any[];
    const made = list.find((d) => d.name === "e2e allow hook");
    expect(made?.workspace_id).toBe(wsId);
    expect(made?.api_key_hashes).toEqual([inWs.body.data.hash]);
    await page.close();
  });

  it("edits a destination's filter rules and sampling", async () => {
    const made = await api("/observability/destinations", {
      method: "POST",
      body: { name: "e2e filtered", type: "webhook", config: { url: "https://hooks.example.com/f" } },
    });
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    const page = await signedIn("/destinations");
    const card = page.getByRole("article", { name: /e2e filtered/ });
    await card.getByRole("button", { name: "Edit e2e filtered" }).click();
    const form = card.getByRole("form", { name: "Edit e2e filtered" });
    await form.getByLabel("Sampling rate (0 to 1)").fill("0.5");
    await form.getByLabel("Apply filter rules (send only generations matching every group)").check();
    await form.getByRole("button", { name: "Add rule group" }).click();
    const group = form.getByRole("group", { name: "Rule group 1" });
    await group.getByLabel("Group 1 logic").selectOption("or");
    await group.getByLabel("Operator").selectOption("contains");
    await group.getByLabel("Value").fill("gpt");
    await group.getByRole("button", { name: "Add rule to group 1" }).click();
    await group.getByLabel("Field").nth(1).selectOption("total_cost");
    await group.getByLabel("Operator").nth(1).selectOption("gt");
    await group.getByLabel("Value").nth(1).fill("0.25");
    await form.getByRole("button", { name: "Save destination" }).click();
    await form.waitFor({ state: "detached" });
    const saved = (await api(`/observability/destinations/${id}`)).body.data;
    expect(saved.sampling_rate).toBe(0.5);
    expect(saved.filter_rules).toEqual({
      enabled: true,
      groups: [
        {
          logic: "or",
          rules: [
            { field: "model", operator: "contains", value: "gpt" },
            { field: "total_cost", operator: "gt", value: 0.25 },
          ],
        },
      ],
    });
    await page.close();
  });

  it("edits a destination's settings: shown as stored, changed, and emptied back to none or the default", async () => {
    const made = await api("/observability/destinations", {
      method: "POST",
      body: {
        name: "e2e langsmith",
        type: "langsmith",
        config: {
          apiKey: "ls-api-key-0123456789abcdef",
          project: "research",
          endpoint: "https://eu.api.smith.langchain.com",
          workspaceId: "ws-123",
        },
      },
    });
    expect(made.status).toBe(201);
    const id = made.body.data.id as string;
    const page = await signedIn("/destinations");
    const card = page.getByRole("article", { name: /e2e langsmith/ });
    await card.getByRole("button", { name: "Edit e2e langsmith" }).click();
    const form = card.getByRole("form", { name: "Edit e2e langsmith" });
    const field = (name: string) => form.locator(`input[name="${name}"]`);
    expect(await field("workspaceId").inputValue()).toBe("ws-123");
    expect(await field("apiKey").inputValue()).toBe("");
    await field("workspaceId").fill("");
    await field("endpoint").fill("");
    await field("project").fill("evals");
    await form.getByRole("button", { name: "Save destination" }).click();
    await form.waitFor({ state: "detached" });
    const config = (await api(`/observability/destinations/${id}`)).body.data.config;
    expect(config.workspaceId ?? null).toBeNull();
    expect(config.endpoint).toBe("https://api.smith.langchain.com");
    expect(config.project).toBe("evals");
    // The secret was not sent, so it is the stored one.
    expect(config.apiKey).toBe("ls-a...cdef");
    await page.close();
  });

  it("disables, then deletes a destination only after confirmation", async () => {
    const made = await api("/observability/destinations", {
      method: "POST",
      body: { name: "e2e doomed", type: "webhook", config: { url: "https://hooks.example.com/x" } },
    });
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    const page = await signedIn("/destinations");
    const card = page.getByRole("article", { name: /e2e doomed/ });
    await card.getByRole("button", { name: "Disable e2e doomed" }).click();
    await expect
      .poll(async (): Promise<unknown> => (await api(`/observability/destinations/${id}`)).body.data.enabled)
      .toBe(false);
    const dialog = page.getByRole("dialog", { name: /Delete the destination "e2e doomed"/ });
    await card.getByRole("button", { name: "Delete e2e doomed" }).click();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await api(`/observability/destinations/${id}`)).status).toBe(200);
    await card.getByRole("button", { name: "Delete e2e doomed" }).click();
    await dialog.getByRole("button", { name: "Delete destination" }).click();
    await card.waitFor({ state: "detached" });
    expect((await api(`/observability/destinations/${id}`)).status).toBe(404);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("dest-title");
    await page.close();
  });

  it("draws chart times in UTC, whatever the browser's time zone", async () => {
    const page = await signedIn("/");
    // A browser in California: a day bucket that starts at 00:00 UTC is 16:00 the day before there.
    const cdp = await context.newCDPSession(page);
    await cdp.send("Emulation.setTimezoneOverride", { timezoneId: "America/Los_Angeles" });
    await page.reload();
    const chart = page.locator(".chart").first();
    const plot = chart.locator(".u-over");
    await plot.waitFor();
    // The chart may be drawn again once its data arrives (the plot is replaced): wait for a plot
    // that stays laid out.
    let box: Awaited<ReturnType<typeof plot.boundingBox>> = null;
    await expect.poll(async () => (box = await plot.boundingBox()) !== null, { timeout: 10_000 }).toBe(true);
    box = box!;
    // The cursor at the left edge snaps to the first bucket; the legend shows its time.
    await page.mouse.move(box.x + 1, box.y + box.height / 2);
    const first = (JSON.parse((await chart.getAttribute("data-points")) ?? "{}") as { x: number[] }).x[0]!;
    const day = new Date(first * 1000).toISOString().slice(0, 10);
    await expect
      .poll(() => chart.locator(".u-legend .u-series").first().textContent())
      .toBe(`Time (UTC)${day} 12:00am`);
    await cdp.detach();
    await page.close();
  });

  it("says whether a destination's connection test passed, in words, and shows its delivery status", async () => {
    const made = await api("/observability/destinations", {
      method: "POST",
      body: {
        name: "e2e refused",
        type: "otel-collector",
        config: { endpoint: "http://127.0.0.1:9/v1/traces" },
      },
    });
    expect(made.status).toBe(201);
    const page = await signedIn("/destinations");
    const card = page.getByRole("article", { name: /e2e refused/ });
    await card.getByRole("button", { name: "Test connection" }).click();
    const result = card.locator(".extra").first();
    await expect.poll(() => result.textContent()).toMatch(/^Connection test failed: .+/);
    const text = (await result.textContent()) ?? "";
    // The API's own answer: a 200 whose data says the test failed. No raw JSON, no "200".
    expect(text).not.toContain("{");
    expect(text).not.toMatch(/^200/);
    await card.getByRole("button", { name: "Delivery status" }).click();
    const status = card.getByRole("group", { name: "Delivery status" });
    await status.waitFor();
    const deliveries = (await api(`/observability/destinations/${made.body.data.id}/deliveries`)).body.data;
    expect(await status.locator("dd").first().textContent()).toBe(String(deliveries.pending));
    expect(await status.textContent()).toContain(`Circuit${deliveries.circuit}`);
    expect(await status.textContent()).not.toContain("{");
    await page.close();
  });

  it("sets a destination's privacy mode and payload options, and shows them", async () => {
    const page = await signedIn("/destinations");
    await page.getByText("Add a destination").click();
    const form = page.getByRole("form", { name: "New destination" });
    await form.getByLabel("Type").selectOption("webhook");
    await form.locator("#new-name").fill("e2e private");
    await form.locator("#new-cfg-url").fill("https://hooks.example.com/private");
    await form.getByLabel(/Privacy mode/).check();
    await form.getByLabel(/Include cost/).check();
    await form.getByRole("button", { name: "Create destination" }).click();
    const card = page.getByRole("article", { name: /e2e private/ });
    await card.waitFor();
    expect(await card.textContent()).toContain("privacy mode");
    const list = (await api("/observability/destinations")).body.data as any[];
    const made = list.find((d) => d.name === "e2e private");
    expect(made).toMatchObject({
      privacy_mode: true,
      broadcast_generation_cost: true,
      broadcast_generation_identity: false,
      broadcast_generation_request_context: false,
    });
    await card.getByRole("button", { name: "Edit e2e private" }).click();
    const edit = card.getByRole("form", { name: "Edit e2e private" });
    expect(await edit.getByLabel(/Privacy mode/).isChecked()).toBe(true);
    await edit.getByLabel(/Privacy mode/).uncheck();
    await edit.getByLabel(/Include identity/).check();
    await edit.getByRole("button", { name: "Save destination" }).click();
    await edit.waitFor({ state: "detached" });
    expect((await api(`/observability/destinations/${made.id}`)).body.data).toMatchObject({
      privacy_mode: false,
      broadcast_generation_cost: true,
      broadcast_generation_identity: true,
    });
    // The list reloads after the form closes: wait for the card to show the saved settings.
    await card.filter({ hasNotText: "privacy mode" }).waitFor();
    expect(await card.textContent()).not.toContain("privacy mode");
    await page.close();
  });

  it("manages BYOK provider keys: add (shown masked), edit, replace the secret, refuse, disable, delete", async (ctx) => {
    if (!("/byok" in paths)) {
      process.stdout.write("SKIPPED BYOK e2e: this server has no /api/v1/byok\n");
      ctx.skip();
      return;
    }
    const secret = "sk-proj-e2e-0123456789abcdefghij";
    const page = await signedIn("/byok");
    await page.getByRole("table", { name: /Provider keys/ }).waitFor();
    await page.getByText("Add a provider key").click();
    const form = page.getByRole("form", { name: "New provider key" });
    await form.getByLabel("Provider", { exact: true }).fill("openai");
    await form.getByLabel("Provider key").fill(secret);
    await form.getByLabel("Name").fill("e2e byok");
    await form.getByLabel("Order (lower first)").fill("3");
    await form.getByLabel(/Fallback:/).check();
    await form.getByLabel(/Only for models/).fill("openai/gpt-4o, openai/o4-mini");
    await form.getByRole("button", { name: "Add provider key" }).click();
    const row = page.getByRole("row", { name: /^e2e byok / });
    await row.waitFor();
    const find = async (): Promise<Record<string, unknown> | undefined> =>
      ((await api("/byok")).body.data as Record<string, unknown>[]).find((b) =>
        String(b.name).startsWith("e2e byok"),
      );
    const made = await find();
    if (made === undefined) throw new Error("the provider key was not created");
    expect(made).toMatchObject({
      provider: "openai",
      sort_order: 3,
      is_fallback: true,
      allowed_models: ["openai/gpt-4o", "openai/o4-mini"],
      disabled: false,
    });
    expect(await row.textContent()).toContain(made.label);
    expect(made.label).not.toBe(secret);
    expect(await page.content()).not.toContain(secret);

    // Edit without a new secret: the stored one stays; with one: it is replaced.
    await row.getByRole("button", { name: "Edit e2e byok" }).click();
    const edit = page.getByRole("form", { name: "Edit e2e byok" });
    await edit.getByLabel("Name").fill("e2e byok renamed");
    await edit.getByLabel(/Fallback:/).uncheck();
    await edit.getByRole("button", { name: "Save provider key" }).click();
    await page.getByRole("row", { name: /^e2e byok renamed / }).waitFor();
    expect(await find()).toMatchObject({ name: "e2e byok renamed", is_fallback: false, label: made.label });
    const renamed = page.getByRole("row", { name: /^e2e byok renamed / });
    await renamed.getByRole("button", { name: "Edit e2e byok renamed" }).click();
    await page
      .getByRole("form", { name: "Edit e2e byok renamed" })
      .getByLabel("New provider key")
      .fill("sk-proj-replaced-zzzz9999");
    await page
      .getByRole("form", { name: "Edit e2e byok renamed" })
      .getByRole("button", { name: "Save provider key" })
      .click();
    await expect.poll(async (): Promise<unknown> => (await find())?.label).toBe("sk-p...9999");

    // The API's refusal, under the form, with the field marked.
    await form.getByLabel("Provider", { exact: true }).fill("no-such-provider");
    await form.getByLabel("Provider key").fill("sk-whatever-1234");
    await form.getByRole("button", { name: "Add provider key" }).click();
    const alert = form.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^provider: /);
    expect(await form.getByLabel("Provider", { exact: true }).getAttribute("aria-invalid")).toBe("true");

    await renamed.getByRole("button", { name: "Disable e2e byok renamed" }).click();
    await expect.poll(async (): Promise<unknown> => (await find())?.disabled).toBe(true);
    await expect.poll(() => renamed.textContent()).toContain("Disabled");
    await renamed.getByRole("button", { name: "Delete e2e byok renamed" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete provider key" }).click();
    await renamed.waitFor({ state: "detached" });
    expect(await find()).toBeUndefined();
    await page.close();
  });

  it("keeps checkboxes beside their labels on a narrow screen", async () => {
    const page = await signedIn("/analytics");
    await page.setViewportSize({ width: 390, height: 844 });
    const box = page.getByRole("checkbox", { name: "Request Count", exact: true });
    await box.waitFor();
    const label = page.locator("label", { has: box });
    const [b, l] = [(await box.boundingBox())!, (await label.boundingBox())!];
    // The box is a box, at the start of its label, not stretched across the screen.
    expect(b.width).toBeLessThan(30);
    expect(b.x - l.x).toBeLessThan(10);
    await page.goto(`${server.origin}/workspaces`);
    const byok = page.getByRole("checkbox").first();
    await byok.waitFor();
    expect((await byok.boundingBox())!.width).toBeLessThan(30);
    await page.close();
  });

  it("lists the provider keys of every workspace, not only the default one's", async (ctx) => {
    if (!("/byok" in paths)) {
      process.stdout.write("SKIPPED BYOK workspaces e2e: this server has no /api/v1/byok\n");
      ctx.skip();
      return;
    }
    const ws = await api("/workspaces", {
      method: "POST",
      body: { name: "e2e byok ws", slug: "e2e-byok-ws" },
    });
    expect(ws.status).toBe(201);
    const made = await api("/byok", {
      method: "POST",
      body: {
        provider: "openai",
        key: "sk-proj-e2e-other-workspace-0123456789",
        name: "e2e other ws key",
        workspace_id: ws.body.data.id,
      },
    });
    expect(made.status).toBe(201);
    // GET /byok without workspace_id lists the default workspace's only (the SDK's contract).
    const listed = (await api("/byok")).body.data as { name: string }[];
    expect(listed.map((b) => b.name)).not.toContain("e2e other ws key");
    const page = await signedIn("/byok");
    const row = page.getByRole("row", { name: /^e2e other ws key / });
    await row.waitFor();
    expect(await row.textContent()).toContain("e2e byok ws");
    await page.close();
  });

  it("finds a generation by its id and shows its record; an unknown id gets the API's message", async (ctx) => {
    if (!("/generation" in paths) || !("/chat/completions" in paths)) {
      process.stdout.write("SKIPPED generation lookup e2e: no GET /generation or chat completions\n");
      ctx.skip();
      return;
    }
    const created = await api("/keys", { method: "POST", body: { name: "generation lookup" } });
    const models = (await (await fetch(`${server.origin}/api/v1/models`)).json()) as {
      data: { id: string }[];
    };
    const res = await fetch(`${server.origin}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${created.body.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: models.data[0]!.id, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get("x-gatehouse-generation-id") ?? "";
    await expect.poll(async () => (await api(`/generation?id=${id}`)).status).toBe(200);
    const record = (await api(`/generation?id=${id}`)).body.data;
    const page = await signedIn("/generations");
    await page.locator("#gen-id").fill(id);
    await page.getByRole("button", { name: "Find" }).click();
    const card = page.getByRole("article");
    await card.waitFor();
    expect(await card.locator('dd[data-field="model"]').textContent()).toBe(record.model);
    expect(await card.locator('dd[data-field="total_cost"]').textContent()).toBe(usd(record.total_cost));
    expect(await card.locator('dd[data-field="created_at"]').textContent()).toBe(utc(record.created_at));
    expect(await card.locator('dd[data-field="tokens_prompt"]').textContent()).toBe(
      String(record.tokens_prompt),
    );
    expect(new URL(page.url()).search).toBe(`?id=${id}`);

    await page.locator("#gen-id").fill("gen-does-not-exist");
    await page.getByRole("button", { name: "Find" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      (await api("/generation?id=gen-does-not-exist")).body.error.message,
    );
    await page.close();
  });

  it("has no serious or critical accessibility violation on any page", async () => {
    const pages = [
      "/",
      "/analytics",
      "/keys",
      "/workspaces",
      "/guardrails",
      "/members",
      "/byok",
      "/destinations",
      "/generations",
      "/playground",
    ];
    const page = await signedIn("/");
    const found: Record<string, string[]> = {};
    for (const p of pages) {
      await page.goto(`${server.origin}${p}`);
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      await page.waitForLoadState("networkidle");
      const v = await axeViolations(page);
      if (v.length) found[p] = v;
    }
    // The sign-in page too.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Management key").waitFor();
    const v = await axeViolations(page);
    if (v.length) found["sign-in"] = v;
    expect(found).toEqual({});
    await page.close();
  }, 120_000);

  it("streams a chat answer in the Playground", async (ctx) => {
    if (!("/chat/completions" in paths)) {
      process.stdout.write(
        "SKIPPED playground e2e: this server has no POST /api/v1/chat/completions (not in /api/v1/openapi.json)\n",
      );
      ctx.skip();
      return;
    }
    const created = await api("/keys", { method: "POST", body: { name: "playground" } });
    const page = await signedIn("/playground");
    await page.locator("#pg-key").fill(created.body.key);
    // The default model is the first of GET /models, filled in once that answers (a loaded CI
    // machine could click Send before, with no model).
    await expect.poll(() => page.locator("#pg-model").inputValue()).not.toBe("");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator("#pg-usage").waitFor({ timeout: 30_000 });
    expect(((await page.locator("#pg-answer").textContent()) ?? "").length).toBeGreaterThan(0);
    expect(await page.locator("#pg-usage").textContent()).toMatch(/Tokens: \d+ prompt, \d+ completion/);
    // The answer's generation, looked up on the Generations page.
    const id = (await page.locator("#pg-generation").textContent()) ?? "";
    expect(id).toMatch(/^gen-/);
    await page.locator("#pg-generation").click();
    await expect.poll(() => page.locator("#gen-found").textContent()).toBe(id);
    await page.close();
  });

  it("sends one conversation through each API surface, streamed and not; the explorer groups and filters by API", async (ctx) => {
    const surfaces = ["/chat/completions", "/responses", "/messages"];
    if (!surfaces.every((p) => p in paths)) {
      process.stdout.write(
        "SKIPPED playground surfaces e2e: the server lacks one of " + surfaces.join(", ") + "\n",
      );
      ctx.skip();
      return;
    }
    const created = await api("/keys", { method: "POST", body: { name: "playground surfaces" } });
    const hash = created.body.data.hash as string;
    const page = await signedIn("/playground");
    await page.locator("#pg-key").fill(created.body.key);
    await page.locator("#pg-model").fill("mock/echo");
    await page.getByLabel("Instructions (optional; the system prompt)").fill("Be brief.");
    const apiSelect = page.locator("#pg-api");
    expect(
      await apiSelect.locator("option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
    ).toEqual(["chat", "responses", "messages"]);
    const labels = { chat: "Chat completions", responses: "Responses", messages: "Messages" } as const;
    for (const surface of ["chat", "responses", "messages"] as const) {
      for (const stream of [true, false]) {
        await apiSelect.selectOption(surface);
        await page.getByLabel("Stream the answer").setChecked(stream);
        await page.locator("#pg-prompt").fill(`hello via ${surface} ${stream}`);
        await page.getByRole("button", { name: "Send" }).click();
        const via = `Sent through ${labels[surface]} (POST /api/v1${surface === "chat" ? "/chat/completions" : `/${surface}`}), ${stream ? "streamed" : "as one answer"}.`;
        await expect.poll(() => page.locator("#pg-via").textContent(), { timeout: 30_000 }).toBe(via);
        expect(await page.getByRole("alert").count()).toBe(0);
        // The mock echoes the last user message: the conversation arrived whole through this surface.
        expect(await page.locator("#pg-answer").textContent()).toBe(`Echo: hello via ${surface} ${stream}`);
        // Usage and cost as the surface reported them are the generation's recorded figures.
        const id = (await page.locator("#pg-generation").textContent()) ?? "";
        expect(id).toMatch(/^gen-/);
        await expect.poll(async () => (await api(`/generation?id=${id}`)).status).toBe(200);
        const record = (await api(`/generation?id=${id}`)).body.data;
        expect(await page.locator("#pg-usage").textContent()).toBe(
          `Tokens: ${record.tokens_prompt} prompt, ${record.tokens_completion} completion; cost ${usd(record.total_cost)}; generation ${id}`,
        );
      }
    }

    // The conversation goes on: the kept turns are sent again, through another surface.
    await page.getByRole("button", { name: "Continue the conversation" }).click();
    expect(await page.locator("#pg-history li").allTextContents()).toEqual([
      "You: hello via messages false",
      "Model: Echo: hello via messages false",
    ]);
    await apiSelect.selectOption("responses");
    await page.locator("#pg-prompt").fill("and again");
    await page.getByRole("button", { name: "Send" }).click();
    await expect
      .poll(() => page.locator("#pg-answer").textContent(), { timeout: 30_000 })
      .toBe("Echo: and again");
    // With the conversation, its buttons and the usage line shown: still no serious violation.
    expect(await axeViolations(page)).toEqual([]);
    await page.close();

    // The explorer: "API" is a dimension to group by and a field to filter on.
    const end = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
    const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
    const base = {
      metrics: ["request_count"],
      time_range: { start: iso(end - 86_400_000), end: iso(end) },
      filters: [{ field: "api_key_id", operator: "eq", value: hash }],
    };
    // The seven generations of this key are in the analytics store before the page asks.
    await expect
      .poll(
        async (): Promise<unknown> =>
          (await api("/analytics/query", { method: "POST", body: base })).body.data.data[0]?.request_count,
      )
      .toBe(7);
    const explorer = await signedIn(`/analytics?q=${encodeURIComponent(JSON.stringify(base))}`);
    await explorer.getByRole("table", { name: "Result rows" }).waitFor();
    await explorer.getByLabel("Dimension 1").selectOption({ label: "API" });
    await explorer.getByRole("button", { name: "Add filter" }).click();
    const field = explorer.getByLabel("Field").nth(1);
    await field.selectOption({ label: "API" });
    await explorer.getByLabel("Operator").nth(1).selectOption("in");
    await explorer.getByLabel("Value (comma-separated)").fill("responses, messages");
    await explorer.getByRole("button", { name: "Run query" }).click();
    const query = {
      ...base,
      dimensions: ["api"],
      filters: [...base.filters, { field: "api", operator: "in", value: ["responses", "messages"] }],
    };
    await expect
      .poll(async (): Promise<unknown> =>
        JSON.parse((await explorer.locator("#query-json").textContent()) ?? "{}"),
      )
      .toEqual(query);
    const answer = (await api("/analytics/query", { method: "POST", body: query })).body.data as {
      data: { api: string; request_count: number }[];
    };
    const byApi = Object.fromEntries(answer.data.map((r) => [r.api, r.request_count]));
    expect(byApi).toEqual({ responses: 3, messages: 2 });
    const rows = async () =>
      explorer
        .getByRole("table", { name: "Result rows" })
        .evaluate((t) =>
          [...t.querySelectorAll("tbody tr")].map((tr) =>
            [...tr.querySelectorAll("td")].map((td) => `${td.dataset.col}=${td.dataset.value}`).join(" "),
          ),
        );
    await expect.poll(rows).toEqual(answer.data.map((r) => `api=${r.api} request_count=${r.request_count}`));
    // The chart has one bar per API, with the API's counts.
    const points = JSON.parse((await explorer.locator(".result figure").getAttribute("data-points")) ?? "{}");
    expect(points.x).toEqual(answer.data.map((r) => r.api));
    expect(points.series[0].values).toEqual(answer.data.map((r) => r.request_count));
    expect(await explorer.getByRole("columnheader", { name: "API" }).count()).toBe(1);
    await explorer.close();
  }, 120_000);
});
