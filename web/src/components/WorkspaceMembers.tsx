import { useEffect, useState } from "preact/hooks";
import { call, errorText } from "../api/client.ts";
import { memberName, workspaceMembers, type Member, type WorkspaceMember } from "../api/members.ts";
import type { Workspace } from "../api/types.ts";
import { utc } from "../lib/format.ts";
import { SelectField } from "./form.tsx";
import { ErrorNote, Loading } from "./ui.tsx";

/**
 * One workspace's members at a time (GET /workspaces/{id}/members, every page): listed, added from
 * the organization's members, removed. The API's refusals are shown as they come: removing from the
 * default workspace (it holds every member), removing a member with active keys in the workspace.
 */
export function WorkspaceMembers({ workspaces, members }: { workspaces: Workspace[]; members: Member[] }) {
  const [wsId, setWsId] = useState(workspaces[0]?.id ?? "");
  const [rows, setRows] = useState<WorkspaceMember[] | null>(null);
  const [picked, setPicked] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);
  const load = (id = wsId) =>
    workspaceMembers(id).then(setRows, (e: unknown) => {
      setRows([]);
      setError(errorText(e));
    });
  useEffect(() => {
    setRows(null);
    setPicked([]);
    setError(null);
    if (wsId) void load(wsId);
    // A member added or deleted on the page changes the list (the default workspace holds everyone).
  }, [wsId, members]);

  const ws = workspaces.find((w) => w.id === wsId);
  const byId = new Map(members.map((m) => [m.id, m]));
  const inWs = new Set((rows ?? []).map((r) => r.user_id));
  const offered = members.filter((m) => !inWs.has(m.id));
  const send = (done: string, fn: () => Promise<unknown>) => {
    setError(null);
    setBusy(true);
    fn().then(
      () => {
        setBusy(false);
        setStatus(done);
        setPicked([]);
        void load();
      },
      (e: unknown) => {
        setBusy(false);
        setError(errorText(e));
      },
    );
  };
  const who = (userId: string) => {
    const m = byId.get(userId);
    return m ? memberName(m) : userId;
  };

  return (
    <section aria-labelledby="ws-members-title" class="panel spaced">
      <h2 id="ws-members-title">Workspace members</h2>
      <p class="help">
        Every member belongs to the default workspace. A member with active keys in a workspace cannot be
        removed from it.
      </p>
      <div class="row">
        <SelectField
          label="Show members of"
          value={wsId}
          onValue={setWsId}
          options={workspaces.map((w) => [w.id, w.name] as const)}
        />
      </div>
      <ErrorNote error={error} />
      <p class="sr-only" role="status">
        {status}
      </p>
      {!rows ? (
        <Loading what="workspace members" />
      ) : (
        <>
          <div class="table-scroll" tabIndex={0} role="region" aria-label={`Members of ${ws?.name ?? ""}`}>
            <table class="stack">
              <caption>
                Members of {ws?.name} ({rows.length})
              </caption>
              <thead>
                <tr>
                  <th scope="col">Member</th>
                  <th scope="col">Role</th>
                  <th scope="col">Since</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {rows.length === 0 && (
                  <tr>
                    <td colSpan={4}>No members in this workspace.</td>
                  </tr>
                )}
                {rows.map((r) => (
                  <tr key={r.id}>
                    <th scope="row">{who(r.user_id)}</th>
                    <td data-label="Role">{r.role}</td>
                    <td data-label="Since">{utc(r.created_at)}</td>
                    <td class="actions">
                      <button
                        type="button"
                        class="secondary"
                        disabled={busy}
                        onClick={() =>
                          send(`${who(r.user_id)} removed from ${ws?.name}`, () =>
                            call("post", "/workspaces/{id}/members/remove", {
                              path: { id: wsId },
                              body: { user_ids: [r.user_id] },
                            }),
                          )
                        }
                      >
                        Remove<span class="sr-only"> {who(r.user_id)}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <fieldset>
            <legend>Add members to {ws?.name}</legend>
            {offered.length === 0 ? (
              <p class="muted">Every member of the organization is in this workspace.</p>
            ) : (
              <div class="checks">
                {offered.map((m) => (
                  <label key={m.id}>
                    <input
                      type="checkbox"
                      checked={picked.includes(m.id)}
                      onChange={(e) =>
                        setPicked(
                          e.currentTarget.checked ? [...picked, m.id] : picked.filter((x) => x !== m.id),
                        )
                      }
                    />{" "}
                    {memberName(m)}
                  </label>
                ))}
              </div>
            )}
            <button
              type="button"
              disabled={busy || picked.length === 0}
              onClick={() =>
                send(
                  `${picked.length} member${picked.length === 1 ? "" : "s"} added to ${ws?.name}`,
                  async () => {
                    // The API takes 100 ids a request.
                    for (let i = 0; i < picked.length; i += 100)
                      await call("post", "/workspaces/{id}/members/add", {
                        path: { id: wsId },
                        body: { user_ids: picked.slice(i, i + 100) },
                      });
                  },
                )
              }
            >
              Add selected members
            </button>
          </fieldset>
        </>
      )}
    </section>
  );
}
