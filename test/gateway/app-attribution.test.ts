import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chat } from "../helpers/gateway-client.js";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * App attribution of a chat completion: `HTTP-Referer` (else the standard `Referer`) is the app's
 * URL and `X-OpenRouter-Title` (what the official SDK sends for `appTitle`; else `X-Title`) its
 * name. The generation record carries them: GET /generation's `http_referer`, `origin` and
 * `app_id` (one id per referer, from the title when there is no referer), and the analytics
 * engine's `app` dimension shows the app by its title (the latest one seen).
 */
describe("app attribution: HTTP-Referer and X-Title on a chat request", () => {
  let s: ListeningApp;
  let key: string;
  /** The built-in mock's day: the test clock's. */
  const range = { start: "2026-11-18T00:00:00Z", end: "2026-11-18T23:00:00Z" };

  beforeAll(async () => {
    s = await startListening();
    const r = await s.call({ method: "POST", url: "/api/v1/keys", payload: { name: "apps" } });
    key = r.json<{ key: string }>().key;
  });
  afterAll(() => s?.close());

  /** A chat completion through the mock with these headers; the generation id. */
  async function chatId(headers: Record<string, string>, stream = false): Promise<string> {
    const r = await chat(s, key, { model: "mock/echo", stream }, { headers });
    expect(r.status, r.text).toBe(200);
    return r.id!;
  }

  async function generation(id: string) {
    await s.app.gateway.recorder.settled();
    const r = await s.call({ method: "GET", url: `/api/v1/generation?id=${id}`, auth: key });
    expect(r.statusCode, r.body).toBe(200);
    return r.json<{ data: { app_id: number | null; http_referer: string | null; origin: string } }>().data;
  }

  /** The analytics engine's label for an app id (its title, or the id when it has none). */
  async function appLabel(appId: number): Promise<unknown> {
    await s.app.gateway.recorder.settled();
    const r = await s.call({
      method: "POST",
      url: "/api/v1/analytics/query",
      payload: {
        metrics: ["request_count"],
        dimensions: ["app"],
        filters: [{ field: "app", operator: "eq", value: appId }],
        time_range: range,
      },
    });
    expect(r.statusCode, r.body).toBe(200);
    const rows = r.json<{ data: { data: { app: unknown; request_count: number }[] } }>().data.data;
    expect(rows).toHaveLength(1);
    return rows[0]!.app;
  }

  it("HTTP-Referer and X-Title: the record's referer, origin and app id; the app is shown by its title", async () => {
    for (const stream of [false, true]) {
      const referer = `https://chat-${stream ? "stream" : "full"}.example/`;
      const g = await generation(await chatId({ "HTTP-Referer": referer, "X-Title": "Chat App" }, stream));
      expect(g.http_referer).toBe(referer);
      expect(g.origin).toBe(referer);
      expect(Number.isSafeInteger(g.app_id) && g.app_id! > 0).toBe(true);
      expect(await appLabel(g.app_id!)).toBe("Chat App");
    }
  });

  it("X-OpenRouter-Title (the SDK's appTitle) is the title, and wins over X-Title", async () => {
    const a = await generation(
      await chatId({ "HTTP-Referer": "https://sdk-app.example", "X-OpenRouter-Title": "SDK App" }),
    );
    expect(await appLabel(a.app_id!)).toBe("SDK App");
    const b = await generation(
      await chatId({
        "HTTP-Referer": "https://both.example",
        "X-OpenRouter-Title": "Preferred",
        "X-Title": "Legacy",
      }),
    );
    expect(await appLabel(b.app_id!)).toBe("Preferred");
    // Through the official SDK (appTitle, httpReferer).
    const res = await s.sdk(key).chat.send({
      httpReferer: "https://via-sdk.example",
      appTitle: "Via SDK",
      chatRequest: { model: "mock/echo", messages: [{ role: "user", content: "Hi" }], stream: false },
    });
    const c = await generation((res as { id: string }).id);
    expect(c.http_referer).toBe("https://via-sdk.example");
    expect(await appLabel(c.app_id!)).toBe("Via SDK");
  });

  it("one app per referer: the same referer keeps its id whatever the title (the latest title is shown); another referer is another app", async () => {
    const first = await generation(
      await chatId({ "HTTP-Referer": "https://one.example", "X-Title": "One v1" }),
    );
    const again = await generation(
      await chatId({ "HTTP-Referer": "https://one.example", "X-Title": "One v2" }),
    );
    expect(again.app_id).toBe(first.app_id);
    expect(await appLabel(first.app_id!)).toBe("One v2");
    const other = await generation(
      await chatId({ "HTTP-Referer": "https://two.example", "X-Title": "One v2" }),
    );
    expect(other.app_id).not.toBe(first.app_id);
  });

  it("the standard Referer header counts when HTTP-Referer is absent; HTTP-Referer wins when both are sent", async () => {
    const std = await generation(await chatId({ Referer: "https://standard.example/page" }));
    expect(std.http_referer).toBe("https://standard.example/page");
    const both = await generation(
      await chatId({ Referer: "https://standard.example/page", "HTTP-Referer": "https://explicit.example" }),
    );
    expect(both.http_referer).toBe("https://explicit.example");
    expect(both.app_id).not.toBe(std.app_id);
  });

  it("a title without a referer is still an app (no referer, no origin); neither header: no app", async () => {
    const titled = await generation(await chatId({ "X-Title": "Desktop tool" }));
    expect(titled.http_referer).toBeNull();
    expect(titled.origin).toBe("");
    expect(titled.app_id).not.toBeNull();
    expect(await appLabel(titled.app_id!)).toBe("Desktop tool");
    const none = await generation(await chatId({}));
    expect(none.app_id).toBeNull();
    expect(none.http_referer).toBeNull();
    expect(none.origin).toBe("");
  });

  it("a title or referer longer than 1024 characters is cut to 1024, and the generation is still recorded", async () => {
    const long = `https://long.example/${"p".repeat(2000)}`;
    const g = await generation(await chatId({ "HTTP-Referer": long, "X-Title": "T".repeat(2000) }));
    expect(g.http_referer).toBe(long.slice(0, 1024));
    expect(await appLabel(g.app_id!)).toBe("T".repeat(1024));
  });

  it("a cut never splits a character: an emoji across the 1024th unit is left out whole", async () => {
    // 1024 characters (the schema's limit counts characters), 1025 UTF-16 units: 1023 units,
    // then a two-unit emoji, which a cut at 1024 units would split.
    const user = `${"u".repeat(1023)}\u{1F600}`;
    const r = await fetch(`${s.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock/echo", messages: [{ role: "user", content: "Hi" }], user }),
    });
    expect(r.status).toBe(200);
    const g = (await generation(((await r.json()) as { id: string }).id)) as unknown as {
      external_user: string | null;
    };
    expect(g.external_user).toBe("u".repeat(1023));
  });

  it("control characters (a tab in a header, a newline in user) become spaces; the generation is still recorded and charged", async () => {
    // Before: the record was refused by the ingest path (no control characters): the client had
    // its 200 with a cost, but the key was never charged, GET /generation was 404 and the hold
    // stayed open.
    const usage = async () =>
      (await s.call({ method: "GET", url: "/api/v1/key", auth: key })).json<{ data: { usage: number } }>()
        .data.usage;
    const cases: { headers: Record<string, string>; user?: string }[] = [
      { headers: { "HTTP-Referer": "https://tab.example", "X-Title": "Tab\tApp" } },
      { headers: { "HTTP-Referer": "https://tab\t.example" } },
      { headers: {}, user: "line\nbreak\u007f" },
    ];
    for (const c of cases) {
      const before = await usage();
      const r = await fetch(`${s.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...c.headers },
        body: JSON.stringify({
          model: "mock/echo",
          messages: [{ role: "user", content: "Hi" }],
          ...(c.user !== undefined ? { user: c.user } : {}),
        }),
      });
      expect(r.status).toBe(200);
      const answer = (await r.json()) as { id: string; usage: { cost: number } };
      const g = (await generation(answer.id)) as Awaited<ReturnType<typeof generation>> & {
        external_user: string | null;
      };
      expect(await usage()).toBeCloseTo(before + answer.usage.cost, 12);
      expect(await s.app.gateway.holds.store.openCount()).toBe(0);
      const referer = c.headers["HTTP-Referer"];
      if (referer !== undefined) expect(g.http_referer).toBe(referer.replace("\t", " "));
      if (c.user !== undefined) expect(g.external_user).toBe("line break ");
      if (c.headers["X-Title"] !== undefined) expect(await appLabel(g.app_id!)).toBe("Tab App");
    }
  });
});
