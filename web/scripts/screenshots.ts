/**
 * `npm run screenshots`: pictures of every dashboard page on demo data, into docs/screenshots/
 * (shown in the README). Needs Chromium (/usr/bin/chromium) and the web build (npm run build:web).
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { apiCall, browserUnavailable, launchBrowser, startDemoServer } from "../../test/helpers/dashboard.js";

const OUT = resolve(import.meta.dirname, "../../docs/screenshots");
const reason = browserUnavailable();
if (reason) throw new Error(reason);
mkdirSync(OUT, { recursive: true });

const server = await startDemoServer({ generations: 20_000, days: 30 });
const { context, close } = await launchBrowser();
try {
  const page = await context.newPage();
  await page.goto(server.origin);
  await page.getByLabel("Management key").fill(server.key);
  await page.screenshot({ path: join(OUT, "sign-in.png") });
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();

  const end = new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000);
  const iso = (d: Date) => d.toISOString().replace(/\.\d+Z$/, "Z");
  const query = {
    metrics: ["total_usage", "request_count"],
    dimensions: ["model"],
    granularity: "day",
    time_range: { start: iso(new Date(end.getTime() - 14 * 86_400_000)), end: iso(end) },
  };
  const caps = await page.evaluate(() =>
    fetch("/api/v1/openapi.json").then((r) => r.json() as Promise<{ paths: Record<string, unknown> }>),
  );
  // Members and guardrails first, so that the Keys and Workspaces pictures show the guardrails.
  let seeded: { pii: string } | null = null;
  if ("/guardrails" in caps.paths && "/organization/members" in caps.paths) {
    // A few members and guardrails made through the API, one assigned to a key and one to a member.
    const api = async (path: string, body?: unknown, method = "POST") => {
      const r = await apiCall(server, path, { method: body === undefined ? "GET" : method, body });
      if (r.status >= 300) throw new Error(`${path}: ${JSON.stringify(r.body)}`);
      return r.body as { data: unknown };
    };
    type Id = { id: string };
    const people = [
      ["ada@example.com", "Ada", "Lovelace", "org:admin"],
      ["grace@example.com", "Grace", "Hopper", "org:member"],
      ["alan@example.com", "Alan", "Turing", "org:member"],
    ];
    const ids: string[] = [];
    for (const [email, first_name, last_name, role] of people)
      ids.push(((await api("/organization/members", { email, first_name, last_name, role })).data as Id).id);
    const models = ((await api("/models?output_modalities=all")).data as { id: string }[]).map((m) => m.id);
    const [ws] = (await api("/workspaces")).data as { id: string; default_guardrail_id: string }[];
    const eu = (
      await api("/guardrails", {
        name: "EU only, small models",
        description: "Marketing team",
        limit_usd: 50,
        reset_interval: "monthly",
        allowed_models: models.slice(0, 3),
        allowed_data_regions: ["europe"],
        content_filter_builtins: [{ slug: "credit-card", action: "block" }],
      })
    ).data as Id;
    const pii = (
      await api("/guardrails", {
        name: "PII redaction",
        content_filters: [{ pattern: "\\bACME-\\d{6}\\b", action: "redact", label: "[CUSTOMER_ID]" }],
        content_filter_builtins: [
          { slug: "email", action: "redact" },
          { slug: "phone", action: "redact" },
          { slug: "regex-prompt-injection", action: "flag", scan_scope: "user_only" },
        ],
      })
    ).data as Id;
    await api(`/guardrails/${pii.id}/assignments/members`, { member_user_ids: [ids[1]] });
    const keys = (await api(`/keys?workspace_id=${ws!.id}`)).data as { hash: string }[];
    if (keys[0]) await api(`/guardrails/${eu.id}/assignments/keys`, { key_hashes: [keys[0].hash] });
    await api(
      `/guardrails/${ws!.default_guardrail_id}`,
      { limit_usd: 200, reset_interval: "monthly", enforce_zdr_openai: true },
      "PATCH",
    );
    seeded = { pii: pii.id };
  }
  const shots: [string, string, () => Promise<void>][] = [
    ["overview", "/", async () => void (await page.locator(".chart canvas").nth(2).waitFor())],
    [
      "analytics",
      `/analytics?q=${encodeURIComponent(JSON.stringify(query))}`,
      async () => void (await page.getByRole("table", { name: "Result rows" }).waitFor()),
    ],
    [
      "keys",
      "/keys",
      async () => {
        await page.getByRole("table", { name: /Keys/ }).waitFor();
        // The editor of the first key: name, limit, reset, BYOK flag, expiry.
        await page
          .locator("tbody tr")
          .first()
          .getByRole("button", { name: /^Edit / })
          .click();
        await page
          .getByRole("form", { name: /^Edit / })
          .getByRole("button", { name: "Save" })
          .waitFor();
      },
    ],
    [
      "workspaces",
      "/workspaces",
      async () => {
        const daily = page.getByRole("form", { name: /daily budget/ }).first();
        await daily.getByLabel("Limit (USD)").fill("25");
        await daily.getByRole("button", { name: "Save daily" }).click();
        await daily.getByText("Remaining").waitFor();
        const weekly = page.getByRole("form", { name: /weekly budget/ }).first();
        await weekly.getByLabel("Limit (USD)").fill("10");
        await weekly.getByRole("button", { name: "Save weekly" }).click();
        await weekly.getByRole("alert").waitFor();
      },
    ],
    [
      "destinations",
      "/destinations",
      async () => {
        await page.getByText("Add a destination").click();
        const form = page.getByRole("form", { name: "New destination" });
        await form.getByLabel("Type").selectOption("langfuse");
        await form.locator("#new-name").fill("Langfuse (prod)");
        await form.locator("#new-cfg-publicKey").fill("pk-lf-0123456789abcdef");
        await form.locator("#new-cfg-secretKey").fill("sk-lf-0123456789abcdef");
        await form.getByRole("button", { name: "Create destination" }).click();
        await page.getByRole("article", { name: /Langfuse/ }).waitFor();
        await form.getByLabel("Type").selectOption("s3");
      },
    ],
  ];
  for (const [name, path, ready] of shots) {
    await page.goto(`${server.origin}${path}`);
    await ready();
    await page.waitForLoadState("networkidle");
    await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
    process.stdout.write(`docs/screenshots/${name}.png\n`);
  }
  if ("/byok" in caps.paths) {
    // One provider key added through the form; the list shows it masked.
    await page.goto(`${server.origin}/byok`);
    await page.getByRole("table", { name: /Provider keys/ }).waitFor();
    await page.getByText("Add a provider key").click();
    const form = page.getByRole("form", { name: "New provider key" });
    await form.getByLabel("Provider", { exact: true }).fill("openai");
    await form.getByLabel("Provider key").fill("sk-proj-demo-0123456789abcdef");
    await form.getByLabel("Name").fill("OpenAI (research)");
    await form.getByLabel(/Fallback:/).check();
    await form.getByRole("button", { name: "Add provider key" }).click();
    await page.getByRole("row", { name: /^OpenAI \(research\) / }).waitFor();
    await page.waitForLoadState("networkidle");
    await page.screenshot({ path: join(OUT, "provider-keys.png"), fullPage: true });
    process.stdout.write("docs/screenshots/provider-keys.png\n");
  }
  if (seeded) {
    await page.goto(`${server.origin}/guardrails?id=${seeded.pii}`);
    await page.getByRole("form", { name: "Edit PII redaction" }).waitFor();
    await page.waitForLoadState("networkidle");
    await page.screenshot({ path: join(OUT, "guardrails.png"), fullPage: true });
    process.stdout.write("docs/screenshots/guardrails.png\n");
    await page.goto(`${server.origin}/members`);
    await page.getByRole("table", { name: /^Members of / }).waitFor();
    await page.waitForLoadState("networkidle");
    await page.screenshot({ path: join(OUT, "members.png"), fullPage: true });
    process.stdout.write("docs/screenshots/members.png\n");
  }
  if ("/chat/completions" in caps.paths) {
    // An answer streamed by the built-in mock/echo model, with a key made for it.
    const made = await page.evaluate(
      (key) =>
        fetch("/api/v1/keys", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "playground" }),
        }).then((r) => r.json() as Promise<{ key: string }>),
      server.key,
    );
    await page.goto(`${server.origin}/playground`);
    await page.locator("#pg-key").fill(made.key);
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator("#pg-usage").waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(OUT, "playground.png"), fullPage: true });
    process.stdout.write("docs/screenshots/playground.png\n");
  } else {
    process.stdout.write("no playground.png: this server has no POST /api/v1/chat/completions\n");
  }
  // A narrow screen (a phone held upright).
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(server.origin);
  await page.locator(".chart canvas").nth(2).waitFor();
  await page.screenshot({ path: join(OUT, "overview-narrow.png"), fullPage: false });
  process.stdout.write("docs/screenshots/overview-narrow.png\n");
  await page.goto(`${server.origin}/keys`);
  await page.getByRole("table", { name: /Keys/ }).waitFor();
  await page.screenshot({ path: join(OUT, "keys-narrow.png"), fullPage: false });
  process.stdout.write("docs/screenshots/keys-narrow.png\n");
} finally {
  await close();
  await server.stop();
}
