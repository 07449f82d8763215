import { useEffect, useState } from "preact/hooks";
import { capabilities, type Capabilities } from "./api/capabilities.ts";
import { setUnauthorizedHandler } from "./api/client.ts";
import { clearKey, getKey } from "./api/session.ts";
import { navigate, onLinkClick, useLocation } from "./lib/router.ts";
import { Analytics } from "./pages/Analytics.tsx";
import { Byok } from "./pages/Byok.tsx";
import { Destinations } from "./pages/Destinations.tsx";
import { Generations } from "./pages/Generations.tsx";
import { Guardrails } from "./pages/Guardrails.tsx";
import { Keys } from "./pages/Keys.tsx";
import { Members } from "./pages/Members.tsx";
import { Overview } from "./pages/Overview.tsx";
import { Playground, playgroundApis } from "./pages/Playground.tsx";
import { SignIn } from "./pages/SignIn.tsx";
import { Workspaces } from "./pages/Workspaces.tsx";

interface Page {
  path: string;
  title: string;
  show?: (c: Capabilities) => boolean;
}

const PAGES: Page[] = [
  { path: "/", title: "Overview" },
  { path: "/analytics", title: "Analytics" },
  { path: "/keys", title: "Keys" },
  { path: "/workspaces", title: "Workspaces & budgets" },
  { path: "/guardrails", title: "Guardrails", show: (c) => c.guardrails },
  { path: "/members", title: "Members", show: (c) => c.members },
  { path: "/byok", title: "Provider keys", show: (c) => c.byok },
  { path: "/destinations", title: "Destinations" },
  { path: "/generations", title: "Generations", show: (c) => c.generation },
  { path: "/playground", title: "Playground", show: (c) => playgroundApis(c).length > 0 },
];

export function App() {
  const { path } = useLocation();
  const [signedIn, setSignedIn] = useState(getKey() !== null);
  const [caps, setCaps] = useState<Capabilities | null>(null);

  useEffect(() => {
    setUnauthorizedHandler(() => setSignedIn(false));
    void capabilities().then(setCaps);
  }, []);

  const page = PAGES.find((p) => p.path === path);
  useEffect(() => {
    document.title = signedIn ? `${page?.title ?? "Not found"} · Gatehouse` : "Sign in · Gatehouse";
    document.getElementById("main")?.focus({ preventScroll: true });
  }, [path, signedIn]);

  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;

  const signOut = () => {
    clearKey();
    setSignedIn(false);
    navigate("/");
  };

  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Gatehouse</span>
        <nav aria-label="Main">
          <ul>
            {PAGES.filter((p) => !p.show || (caps && p.show(caps))).map((p) => (
              <li key={p.path}>
                <a href={p.path} aria-current={p.path === path ? "page" : undefined}>
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {path === "/" && <Overview />}
        {path === "/analytics" && <Analytics />}
        {path === "/keys" && <Keys />}
        {path === "/workspaces" && <Workspaces />}
        {path === "/guardrails" &&
          caps &&
          (caps.guardrails ? (
            <Guardrails caps={caps} />
          ) : (
            <section>
              <h1>Guardrails</h1>
              <p>This server has no guardrails endpoints, so there is nothing to manage here.</p>
            </section>
          ))}
        {path === "/members" &&
          caps &&
          (caps.members ? (
            <Members caps={caps} />
          ) : (
            <section>
              <h1>Members</h1>
              <p>This server has no members endpoints, so there is nothing to manage here.</p>
            </section>
          ))}
        {path === "/byok" &&
          (caps?.byok ? (
            <Byok />
          ) : (
            caps && (
              <section>
                <h1>Provider keys</h1>
                <p>This server has no BYOK endpoints, so there is nothing to manage here.</p>
              </section>
            )
          ))}
        {path === "/destinations" && <Destinations caps={caps} />}
        {path === "/generations" && <Generations />}
        {path === "/playground" &&
          caps &&
          (playgroundApis(caps).length > 0 ? (
            <Playground apis={playgroundApis(caps)} />
          ) : (
            <section>
              <h1>Playground</h1>
              <p>
                This server has no chat completions, Responses or Messages endpoint, so there is nothing to
                try here.
              </p>
            </section>
          ))}
        {!page && (
          <section>
            <h1>Not found</h1>
            <p>
              There is no page at <code>{path}</code>. <a href="/">Go to the overview</a>.
            </p>
          </section>
        )}
      </main>
    </div>
  );
}
