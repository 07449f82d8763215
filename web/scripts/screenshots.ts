/**
 * `npm run screenshots`: pictures of every dashboard page on demo data, into docs/screenshots/
 * (shown in the README). Needs Chromium (/usr/bin/chromium) and the web build (npm run build:web).
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { browserUnavailable, launchBrowser, startDemoServer } from "../../test/helpers/dashboard.js";

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
  const caps = await page.evaluate(() =>
    fetch("/api/v1/openapi.json").then((r) => r.json() as Promise<{ paths: Record<string, unknown> }>),
  );
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
