/// <reference lib="dom" />
import type { BrowserContext, Locator, Page } from "playwright-core";
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

/**
 * The Guardrails and Members pages, and the guardrails shown on the Keys and Workspaces pages, end
 * to end: the real server on a small `gatehouse demo`, the real web build, Debian's Chromium. Every
 * change made in the browser is checked through the API.
 */
const unavailable = browserUnavailable();
let server: DemoServer;
let context: BrowserContext;
let closeBrowser: () => Promise<void>;

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  apiCall(server, path, init);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const row = (scope: Page | Locator, name: string) =>
  scope.getByRole("row", { name: new RegExp(`^${escape(name)}\\b`) });

/** The organization's members table (the workspace members table lists the same people). */
const memberTable = (page: Page) => page.getByRole("table", { name: /^Members \(/ });

interface Workspace {
  id: string;
  name: string;
  default_guardrail_id: string;
}
const workspaces = async () => (await api("/workspaces")).body.data as Workspace[];
const guardrails = async () => (await api("/guardrails?limit=100")).body.data as Record<string, any>[];
const guardrailNamed = async (name: string) => (await guardrails()).find((g) => g.name === name);

async function newKey(body: Record<string, unknown>) {
  const created = await api("/keys", { method: "POST", body });
  expect(created.status).toBe(201);
  return created.body as { key: string; data: { hash: string; name: string; workspace_id: string } };
}

describe.skipIf(unavailable !== null)("Guardrails and Members pages in Chromium", () => {
  let models: string[] = [];

  beforeAll(async () => {
    server = await startDemoServer({ generations: 200, days: 3 });
    ({ context, close: closeBrowser } = await launchBrowser());
    models = ((await api("/models?output_modalities=all")).body.data as { id: string }[]).map((m) => m.id);
  }, 300_000);

  afterAll(async () => {
    await closeBrowser?.();
    await server?.stop();
  });

  it("shows the Guardrails and Members pages in the navigation (the server has their paths)", async () => {
    const page = await signedIn(context, server, "/");
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Guardrails" }).waitFor();
    await nav.getByRole("link", { name: "Members" }).click();
    await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    await page.close();
  });

  it("refuses an unsafe pattern at the filter's field, then creates the guardrail with every field", async () => {
    const page = await signedIn(context, server, "/guardrails");
    await page.getByRole("table", { name: /^Guardrails/ }).waitFor();
    const before = (await guardrails()).length;
    await page.getByText("Create a guardrail").click();
    const form = page.getByRole("form", { name: "New guardrail" });
    await form.getByLabel("Name", { exact: true }).fill("EU cheap models");
    await form.getByLabel("Description").fill("for the marketing team");
    await form.getByLabel("Limit (USD, empty = none)").fill("12.5");
    await form.getByLabel("Resets").selectOption("weekly");
    await form.getByLabel("Count BYOK spend toward the budget").check();
    // Models and providers picked from the server's lists (suggested by a datalist).
    const [m1, m2] = [models[0]!, models[1]!];
    await form.getByLabel("Add an allowed model").fill(m1);
    await form.getByRole("button", { name: "Add to Allowed models" }).click();
    await form.getByLabel("Add an allowed model").fill(m2);
    await form.getByLabel("Add an allowed model").press("Enter");
    const providers = (await api("/providers")).body.data as { slug: string }[];
    await form.getByLabel("Add an ignored provider").fill(providers[0]!.slug);
    await form.getByRole("button", { name: "Add to Ignored providers" }).click();
    await form.getByLabel("europe", { exact: true }).check();
    await form.getByLabel("OpenAI models").selectOption("true");
    await form.getByLabel("Paid models whose endpoints train on data").selectOption("false");
    await form.getByLabel("Email addresses [EMAIL]").check();
    await form.getByLabel("Email addresses: action").selectOption("block");
    await form.getByLabel("Prompt injection [PROMPT_INJECTION]").check();
    await form.getByLabel("Prompt injection: scan").selectOption("user_only");
    // Two custom filters; the second one's pattern backtracks catastrophically.
    await form.getByRole("button", { name: "Add a filter" }).click();
    await form.getByLabel("Filter 1 pattern").fill("\\bproject-x\\b");
    await form.getByLabel("Filter 1 label").fill("[PROJECT]");
    await form.getByRole("button", { name: "Add a filter" }).click();
    await form.getByLabel("Filter 2 pattern").fill("(a+)+b");
    await form.getByLabel("Filter 2 action").selectOption("flag");
    await form.getByRole("button", { name: "Create guardrail" }).click();

    const alert = form.getByRole("alert");
    await alert.waitFor();
    const message = (await alert.textContent()) ?? "";
    expect(message).toMatch(/^content_filters\[1\]\.pattern: /);
    const bad = form.getByLabel("Filter 2 pattern");
    expect(await bad.getAttribute("aria-invalid")).toBe("true");
    expect(await bad.getAttribute("aria-describedby")).toContain((await alert.getAttribute("id")) ?? "-");
    // The field has the focus, and the message is shown beside it too.
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value)).toBe(
      "(a+)+b",
    );
    expect(await form.getByRole("group", { name: "Filter 2" }).locator(".field-error").textContent()).toBe(
      message,
    );
    expect(await form.getByLabel("Filter 1 pattern").getAttribute("aria-invalid")).toBeNull();
    expect(await form.getByLabel("Name", { exact: true }).getAttribute("aria-invalid")).toBeNull();
    expect((await guardrails()).length).toBe(before);

    // The same API check refuses a lookaround; a safe pattern goes through.
    await bad.fill("(?=secret)");
    await form.getByRole("button", { name: "Create guardrail" }).click();
    await expect.poll(() => alert.textContent()).toMatch(/^content_filters\[1\]\.pattern: .*look/i);
    await bad.fill("\\d{3}-\\d{4}");
    await form.getByRole("button", { name: "Create guardrail" }).click();
    await row(page, "EU cheap models").waitFor();
    expect(await page.getByRole("status").filter({ hasText: "EU cheap models created" }).count()).toBe(1);

    const g = await guardrailNamed("EU cheap models");
    const ws = await workspaces();
    expect(g).toMatchObject({
      description: "for the marketing team",
      workspace_id: ws[0]!.id,
      is_default: false,
      limit_usd: 12.5,
      reset_interval: "weekly",
      include_byok_in_budgets: true,
      allowed_models: [m1, m2],
      ignored_models: null,
      allowed_providers: null,
      ignored_providers: [providers[0]!.slug],
      allowed_data_regions: ["europe"],
      enforce_zdr: null,
      enforce_zdr_openai: true,
      enforce_zdr_anthropic: null,
      enable_paid_model_training: false,
      enable_free_model_training: null,
      content_filters: [
        { pattern: "\\bproject-x\\b", action: "redact", label: "[PROJECT]" },
        { pattern: "\\d{3}-\\d{4}", action: "flag", label: null },
      ],
      content_filter_builtins: [
        { slug: "email", action: "block", label: "[EMAIL]" },
        { slug: "regex-prompt-injection", action: "redact", scan_scope: "user_only" },
      ],
    });
    // The row says what the guardrail does.
    const text = (await row(page, "EU cheap models").textContent()) ?? "";
    expect(text).toContain("weekly (BYOK counted)");
    expect(text).toContain(`models: ${m1}, ${m2}`);
    await page.close();
  });

  it("edits a guardrail: collections replaced whole, emptied lists and the budget removed", async () => {
    const created = await api("/guardrails", {
      method: "POST",
      body: {
        name: "edit me",
        limit_usd: 3,
        reset_interval: "daily",
        allowed_models: [models[0]],
        content_filters: [{ pattern: "foo", action: "block" }],
      },
    });
    expect(created.status).toBe(201);
    const page = await signedIn(context, server, "/guardrails");
    await row(page, "edit me").getByRole("button", { name: "Edit edit me" }).click();
    const form = page.getByRole("form", { name: "Edit edit me" });
    expect(await form.getByLabel("Limit (USD, empty = none)").inputValue()).toBe("3");
    expect(await form.getByLabel("Filter 1 pattern").inputValue()).toBe("foo");
    await form.getByLabel("Name", { exact: true }).fill("edited guardrail");
    await form.getByLabel("Limit (USD, empty = none)").fill("");
    await form.getByLabel("Resets").selectOption("");
    await form.getByRole("button", { name: `Remove ${models[0]} from Allowed models` }).click();
    await form.getByRole("button", { name: "Remove filter 1" }).click();
    await form.getByLabel("Add an ignored model").fill(models[2]!);
    await form.getByRole("button", { name: "Add to Ignored models" }).click();
    await form.getByLabel("us", { exact: true }).check();
    await form.getByRole("button", { name: "Save guardrail" }).click();
    await row(page, "edited guardrail").waitFor();
    const g = (await api(`/guardrails/${created.body.data.id}`)).body.data;
    expect(g).toMatchObject({
      name: "edited guardrail",
      limit_usd: null,
      reset_interval: null,
      allowed_models: null,
      ignored_models: [models[2]],
      allowed_data_regions: ["us"],
      content_filters: null,
    });

    // One budget half alone is the API's 400, shown at the field; nothing changes.
    await row(page, "edited guardrail").getByRole("button", { name: "Edit edited guardrail" }).click();
    const again = page.getByRole("form", { name: "Edit edited guardrail" });
    await again.getByLabel("Limit (USD, empty = none)").fill("5");
    await again.getByRole("button", { name: "Save guardrail" }).click();
    await expect.poll(() => again.getByRole("alert").textContent()).toMatch(/^reset_interval: /);
    expect(await again.getByLabel("Resets").getAttribute("aria-invalid")).toBe("true");
    expect((await api(`/guardrails/${created.body.data.id}`)).body.data).toEqual(g);
    await page.close();
  });

  it("assigns a key and shows the key's guardrails on the Keys page, each a link to the guardrail", async () => {
    const ws = (await workspaces())[0]!;
    const g = (
      await api("/guardrails", { method: "POST", body: { name: "keys guardrail", workspace_id: ws.id } })
    ).body.data as { id: string };
    const { data: key } = await newKey({ name: "guarded key", workspace_id: ws.id });
    const page = await signedIn(context, server, "/guardrails");
    await row(page, "keys guardrail").getByRole("button", { name: "Assign keys guardrail" }).click();
    const panel = page.getByRole("group", { name: "Assignments of keys guardrail" });
    await panel.getByLabel("guarded key", { exact: true }).check();
    await panel.getByRole("button", { name: "Assign selected keys" }).click();
    await panel.getByRole("button", { name: "Unassign key guarded key" }).waitFor();
    const assigned = (await api(`/guardrails/${g.id}/assignments/keys`)).body.data as { key_hash: string }[];
    expect(assigned.map((a) => a.key_hash)).toEqual([key.hash]);
    expect(await row(page, "keys guardrail").textContent()).toContain("1 key");

    // The Keys page: the key names its guardrail, a link that opens it on the Guardrails page.
    await page.goto(`${server.origin}/keys`);
    const keyRow = row(page, "guarded key");
    const link = keyRow.getByRole("link", { name: "keys guardrail" });
    await link.waitFor();
    expect(await keyRow.textContent()).toContain("keys guardrail (the key's own)");
    expect(await link.getAttribute("href")).toBe(`/guardrails?id=${g.id}`);
    await link.click();
    await page.getByRole("form", { name: "Edit keys guardrail" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/guardrails");

    // A stored workspace default governs every key of the workspace: shown first.
    await api(`/guardrails/${ws.default_guardrail_id}`, {
      method: "PATCH",
      body: { allowed_data_regions: ["us"] },
    });
    await page.goto(`${server.origin}/keys`);
    await expect
      .poll(() => row(page, "guarded key").textContent())
      .toContain("Workspace defaultkeys guardrail (the key's own)");
    // Unassigned on the Guardrails page, the key is governed by the default only.
    await page.goto(`${server.origin}/guardrails`);
    await row(page, "keys guardrail").getByRole("button", { name: "Assign keys guardrail" }).click();
    await page.getByRole("button", { name: "Unassign key guarded key" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: "guarded key unassigned from keys guardrail" })
      .waitFor();
    expect((await api(`/guardrails/${g.id}/assignments/keys`)).body.data).toEqual([]);
    await api(`/guardrails/${ws.default_guardrail_id}`, { method: "DELETE" });
    await page.close();
  });

  it("edits a workspace's default guardrail (its first save stores it) and shows it on the Workspaces page", async () => {
    const ws = (await workspaces())[1]!;
    const id = ws.default_guardrail_id;
    expect((await guardrails()).some((g) => g.id === id)).toBe(false);
    const page = await signedIn(context, server, "/workspaces");
    const article = page.getByRole("article", { name: new RegExp(`^${escape(ws.name)} `) });
    await article.getByText("Default guardrail: not set up, no rules.").waitFor();
    await article.getByRole("link", { name: "Set it up" }).click();
    const form = page.getByRole("form", { name: `Edit Workspace ${ws.id} Default` });
    await form.getByLabel("Limit (USD, empty = none)").fill("40");
    await form.getByLabel("Resets").selectOption("monthly");
    await form.getByLabel("Phone numbers [PHONE]").check();
    await form.getByRole("button", { name: "Save guardrail" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Default guardrail of ${ws.name} saved` })
      .waitFor();
    const g = (await api(`/guardrails/${id}`)).body.data;
    expect(g).toMatchObject({
      is_default: true,
      workspace_id: ws.id,
      limit_usd: 40,
      reset_interval: "monthly",
      content_filter_builtins: [{ slug: "phone", action: "redact" }],
    });
    expect((await guardrails()).some((x) => x.id === id)).toBe(true);
    const defaults = page.getByRole("table", { name: /Workspace default guardrails/ });
    await expect.poll(() => row(defaults, ws.name).textContent()).toContain("detectors: phone (redact)");

    await page.goto(`${server.origin}/workspaces`);
    const shown = page.getByRole("article", { name: new RegExp(`^${escape(ws.name)} `) });
    await shown.getByRole("link", { name: `Edit it (default guardrail of ${ws.name})` }).waitFor();
    expect(await shown.textContent()).toContain(
      "Default guardrail: $40.00 monthly; detectors: phone (redact).",
    );

    // Cleared after a confirmation: back to no rules.
    await page.goto(`${server.origin}/guardrails`);
    await page.getByRole("button", { name: `Clear default guardrail of ${ws.name}` }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Clear default guardrail" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Default guardrail of ${ws.name} cleared` })
      .waitFor();
    expect((await guardrails()).some((x) => x.id === id)).toBe(false);
    await page.close();
  });

  it("adds a member, edits them, sees them in a workspace's member list, adds and removes them there", async () => {
    const page = await signedIn(context, server, "/members");
    await memberTable(page).waitFor();
    await page.getByText("Add a member").click();
    const form = page.getByRole("form", { name: "New member" });
    // A bad address: the API's 400 at the field.
    await form.getByLabel("Email").fill("not-an-address");
    await form.getByRole("button", { name: "Add member" }).click();
    await expect.poll(() => form.getByRole("alert").textContent()).toMatch(/^email: /);
    expect(await form.getByLabel("Email").getAttribute("aria-invalid")).toBe("true");
    await form.getByLabel("Email").fill("Ada@Example.com");
    await form.getByLabel("First name").fill("Ada");
    await form.getByLabel("Last name").fill("Lovelace");
    await form.getByLabel("Role").selectOption("org:admin");
    await form.getByRole("button", { name: "Add member" }).click();
    await row(memberTable(page), "Ada Lovelace").waitFor();
    const members = (await api("/organization/members")).body.data as Record<string, any>[];
    const ada = members.find((m) => m.email === "ada@example.com")!;
    expect(ada).toMatchObject({ first_name: "Ada", last_name: "Lovelace", role: "org:admin" });

    await row(memberTable(page), "Ada Lovelace")
      .getByRole("button", { name: "Edit ada@example.com" })
      .click();
    const edit = page.getByRole("form", { name: "Edit ada@example.com" });
    await edit.getByLabel("Last name").fill("King");
    await edit.getByLabel("Role").selectOption("org:member");
    await edit.getByRole("button", { name: "Save" }).click();
    await row(memberTable(page), "Ada King").waitFor();
    expect((await api("/organization/members")).body.data).toContainEqual({
      ...ada,
      last_name: "King",
      role: "org:member",
    });

    // The default workspace lists every member; another workspace gets her when added.
    const ws = await workspaces();
    const section = page.getByRole("region", { name: /^Members of / });
    await page.getByLabel("Show members of").selectOption(ws[0]!.id);
    await page.getByRole("table", { name: `Members of ${ws[0]!.name} (${members.length})` }).waitFor();
    expect(await section.textContent()).toContain("Ada King <ada@example.com>");
    const other = ws[2]!;
    await page.getByLabel("Show members of").selectOption(other.id);
    await page.getByRole("table", { name: `Members of ${other.name} (0)` }).waitFor();
    const add = page.getByRole("group", { name: `Add members to ${other.name}` });
    await add.getByLabel("Ada King <ada@example.com>").check();
    await add.getByRole("button", { name: "Add selected members" }).click();
    await page.getByRole("table", { name: `Members of ${other.name} (1)` }).waitFor();
    expect(await section.textContent()).toContain("Ada King <ada@example.com>");
    const listed = (await api(`/workspaces/${other.id}/members`)).body.data as {
      user_id: string;
      role: string;
    }[];
    expect(listed).toMatchObject([{ user_id: ada.id, role: "member" }]);

    // A member with an active key in the workspace cannot be removed from it: the API says why.
    const { data: key } = await newKey({
      name: "ada's key",
      workspace_id: other.id,
      creator_user_id: ada.id,
    });
    await page.getByRole("button", { name: "Remove Ada King <ada@example.com>" }).click();
    await expect.poll(() => page.getByRole("alert").first().textContent()).toContain("has active API keys");
    expect((await api(`/workspaces/${other.id}/members`)).body.data).toHaveLength(1);
    await api(`/keys/${key.hash}`, { method: "DELETE" });
    await page.getByRole("button", { name: "Remove Ada King <ada@example.com>" }).click();
    await page.getByRole("table", { name: `Members of ${other.name} (0)` }).waitFor();
    expect((await api(`/workspaces/${other.id}/members`)).body.data).toEqual([]);
    await page.close();
  });

  it("assigns a member's guardrail, shown on their keys; deleting the member is refused while they have keys", async () => {
    const ws = (await workspaces())[0]!;
    const created = await api("/organization/members", {
      method: "POST",
      body: { email: "grace@example.com", first_name: "Grace" },
    });
    expect(created.status).toBe(201);
    const grace = created.body.data as { id: string };
    const g = (await api("/guardrails", { method: "POST", body: { name: "people guardrail" } })).body
      .data as {
      id: string;
    };
    const { data: key } = await newKey({
      name: "grace's key",
      workspace_id: ws.id,
      creator_user_id: grace.id,
    });

    const page = await signedIn(context, server, "/guardrails");
    await row(page, "people guardrail").getByRole("button", { name: "Assign people guardrail" }).click();
    const panel = page.getByRole("group", { name: "Assignments of people guardrail" });
    await panel.getByLabel("Grace <grace@example.com>").check();
    await panel.getByRole("button", { name: "Assign selected members" }).click();
    await panel.getByRole("button", { name: "Unassign member Grace <grace@example.com>" }).waitFor();
    expect((await api(`/guardrails/${g.id}/assignments/members`)).body.data).toMatchObject([
      { user_id: grace.id },
    ]);

    await page.goto(`${server.origin}/keys`);
    await expect
      .poll(() => row(page, "grace's key").textContent())
      .toContain("people guardrail (its creator's)");

    // The Members page shows it too; deleting Grace is refused while her key is active.
    await page.goto(`${server.origin}/members`);
    const graceRow = row(memberTable(page), "Grace");
    await graceRow.getByRole("link", { name: "people guardrail" }).waitFor();
    await graceRow.getByRole("button", { name: "Delete grace@example.com" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete member" }).click();
    await expect.poll(() => page.getByRole("alert").first().textContent()).toContain("active API key");
    expect((await api("/organization/members")).body.data.some((m: any) => m.id === grace.id)).toBe(true);

    // Without the key, the delete goes through (and takes the assignment with it).
    await api(`/keys/${key.hash}`, { method: "DELETE" });
    await graceRow.getByRole("button", { name: "Delete grace@example.com" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete member" }).click();
    await graceRow.waitFor({ state: "detached" });
    expect((await api("/organization/members")).body.data.some((m: any) => m.id === grace.id)).toBe(false);
    expect((await api(`/guardrails/${g.id}/assignments/members`)).body.data).toEqual([]);
    await page.close();
  });

  it("deletes a guardrail only after confirmation; Cancel keeps it", async () => {
    const g = (await api("/guardrails", { method: "POST", body: { name: "doomed guardrail" } })).body
      .data as {
      id: string;
    };
    const page = await signedIn(context, server, "/guardrails");
    const del = row(page, "doomed guardrail").getByRole("button", { name: "Delete doomed guardrail" });
    const dialog = page.getByRole("dialog", { name: /Delete the guardrail "doomed guardrail"/ });
    await del.click();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await api(`/guardrails/${g.id}`)).status).toBe(200);
    await del.click();
    await dialog.getByRole("button", { name: "Delete guardrail" }).click();
    await row(page, "doomed guardrail").waitFor({ state: "detached" });
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-label")))
      .toBe("Guardrails");
    expect((await api(`/guardrails/${g.id}`)).status).toBe(404);
    await page.close();
  });

  it("has no serious or critical accessibility violation on both pages, forms open", async () => {
    await api("/guardrails", {
      method: "POST",
      body: { name: "axe guardrail", content_filters: [{ pattern: "x+y", action: "flag" }] },
    });
    const page = await signedIn(context, server, "/guardrails");
    await row(page, "axe guardrail").waitFor();
    const found: Record<string, string[]> = {};
    const check = async (state: string) => {
      const v = await axeViolations(page);
      if (v.length) found[state] = v;
    };
    await check("guardrails list");
    await page.getByText("Create a guardrail").click();
    await check("create form open");
    await row(page, "axe guardrail").getByRole("button", { name: "Edit axe guardrail" }).click();
    await page.getByRole("form", { name: "Edit axe guardrail" }).waitFor();
    await check("edit form open");
    await row(page, "axe guardrail").getByRole("button", { name: "Assign axe guardrail" }).click();
    await page.getByRole("button", { name: "Assign selected keys" }).waitFor();
    await check("assignments open");
    await page.goto(`${server.origin}/members`);
    await memberTable(page).waitFor();
    await page.getByText("Add a member").click();
    await check("members");
    await page.setViewportSize({ width: 390, height: 844 });
    await check("members, narrow");
    await page.goto(`${server.origin}/guardrails`);
    await row(page, "axe guardrail").waitFor();
    await check("guardrails, narrow");
    expect(found).toEqual({});
    await page.close();
  }, 120_000);
});
