import { useEffect, useState } from "preact/hooks";
import { call, errorText } from "../api/client.ts";
import type { Guardrail, GuardrailIndex, KeyAssignment, MemberAssignment } from "../api/guardrails.ts";
import { workspaceKeys } from "../api/keys.ts";
import { memberName, type Member } from "../api/members.ts";
import type { Key } from "../api/types.ts";
import { utc } from "../lib/format.ts";
import { ErrorNote, Loading } from "./ui.tsx";

/**
 * A guardrail's key and member assignments: the current ones, each with an Unassign button, and
 * checklists to assign more (the keys of the guardrail's workspace, the organization's members).
 * A key or member holds one guardrail: one on another guardrail is offered with its name, and
 * assigning moves it.
 */
export function GuardrailAssignments({
  guardrail,
  index,
  keyAssignments,
  memberAssignments,
  members,
  onChanged,
}: {
  guardrail: Guardrail;
  index: GuardrailIndex;
  /** This guardrail's assignments. */
  keyAssignments: KeyAssignment[];
  memberAssignments: MemberAssignment[];
  /** The organization's members; null when the server has no members API. */
  members: Member[] | null;
  /** After a change: what happened, for the page's status line. */
  onChanged: (done: string) => void;
}) {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [pickedKeys, setPickedKeys] = useState<string[]>([]);
  const [pickedMembers, setPickedMembers] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ws = guardrail.workspace_id;
  useEffect(() => {
    if (ws) workspaceKeys(ws).then(setKeys, (e: unknown) => setError(errorText(e)));
    else setKeys([]);
  }, [ws]);

  const id = guardrail.id;
  const send = (done: string, fn: () => Promise<unknown>, after?: () => void) => {
    setError(null);
    setBusy(true);
    fn().then(
      () => {
        setBusy(false);
        after?.();
        onChanged(done);
      },
      (e: unknown) => {
        setBusy(false);
        setError(errorText(e));
      },
    );
  };
  const elsewhere = (other: string | undefined) =>
    other && other !== id ? ` (now on ${index.byId.get(other)?.name ?? other})` : "";
  const assignedKeys = new Set(keyAssignments.map((a) => a.key_hash.toLowerCase()));
  const assignedMembers = new Set(memberAssignments.map((a) => a.user_id));
  const offeredKeys = (keys ?? []).filter((k) => !assignedKeys.has(k.hash.toLowerCase()));
  const offeredMembers = (members ?? []).filter((m) => !assignedMembers.has(m.id));
  const memberById = new Map((members ?? []).map((m) => [m.id, m]));
  const name = guardrail.name;

  return (
    <div class="assignments" role="group" aria-label={`Assignments of ${name}`}>
      <ErrorNote error={error} />
      <div class="grid2">
        <section aria-label={`Keys of ${name}`}>
          <h3>Keys ({keyAssignments.length})</h3>
          {keyAssignments.length === 0 ? (
            <p class="muted">No key is assigned.</p>
          ) : (
            <ul class="plain">
              {keyAssignments.map((a) => (
                <li key={a.id}>
                  {a.key_name} <code>{a.key_label}</code>
                  <span class="muted"> since {utc(a.created_at)}</span>{" "}
                  <button
                    type="button"
                    class="secondary small"
                    disabled={busy}
                    onClick={() =>
                      send(`${a.key_name} unassigned from ${name}`, () =>
                        call("post", "/guardrails/{id}/assignments/keys/remove", {
                          path: { id },
                          body: { key_hashes: [a.key_hash] },
                        }),
                      )
                    }
                  >
                    Unassign<span class="sr-only"> key {a.key_name}</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
          {!keys ? (
            <Loading what="keys" />
          ) : (
            <fieldset>
              <legend>Assign keys of the guardrail's workspace</legend>
              {offeredKeys.length === 0 ? (
                <p class="muted">No other key in this workspace.</p>
              ) : (
                <div class="checks">
                  {offeredKeys.map((k) => (
                    <label key={k.hash}>
                      <input
                        type="checkbox"
                        checked={pickedKeys.includes(k.hash)}
                        onChange={(e) =>
                          setPickedKeys(
                            e.currentTarget.checked
                              ? [...pickedKeys, k.hash]
                              : pickedKeys.filter((h) => h !== k.hash),
                          )
                        }
                      />{" "}
                      {k.name}
                      {elsewhere(index.byKey.get(k.hash.toLowerCase()))}
                    </label>
                  ))}
                </div>
              )}
              <button
                type="button"
                disabled={busy || pickedKeys.length === 0}
                onClick={() =>
                  send(
                    `${pickedKeys.length} key${pickedKeys.length === 1 ? "" : "s"} assigned to ${name}`,
                    () =>
                      call("post", "/guardrails/{id}/assignments/keys", {
                        path: { id },
                        body: { key_hashes: pickedKeys },
                      }),
                    () => setPickedKeys([]),
                  )
                }
              >
                Assign selected keys
              </button>
            </fieldset>
          )}
        </section>
        {members && (
          <section aria-label={`Members of ${name}`}>
            <h3>Members ({memberAssignments.length})</h3>
            <p class="help">A member's guardrail governs every key the member created.</p>
            {memberAssignments.length === 0 ? (
              <p class="muted">No member is assigned.</p>
            ) : (
              <ul class="plain">
                {memberAssignments.map((a) => {
                  const m = memberById.get(a.user_id);
                  const who = m ? memberName(m) : a.user_id;
                  return (
                    <li key={a.id}>
                      {who}
                      <span class="muted"> since {utc(a.created_at)}</span>{" "}
                      <button
                        type="button"
                        class="secondary small"
                        disabled={busy}
                        onClick={() =>
                          send(`${who} unassigned from ${name}`, () =>
                            call("post", "/guardrails/{id}/assignments/members/remove", {
                              path: { id },
                              body: { member_user_ids: [a.user_id] },
                            }),
                          )
                        }
                      >
                        Unassign<span class="sr-only"> member {who}</span>
                      </button>
                    </li>
                  );
                })}
              </ul>
            )}
            <fieldset>
              <legend>Assign members</legend>
              {offeredMembers.length === 0 ? (
                <p class="muted">No other member (add members on the Members page).</p>
              ) : (
                <div class="checks">
                  {offeredMembers.map((m) => (
                    <label key={m.id}>
                      <input
                        type="checkbox"
                        checked={pickedMembers.includes(m.id)}
                        onChange={(e) =>
                          setPickedMembers(
                            e.currentTarget.checked
                              ? [...pickedMembers, m.id]
                              : pickedMembers.filter((x) => x !== m.id),
                          )
                        }
                      />{" "}
                      {memberName(m)}
                      {elsewhere(index.byMember.get(m.id))}
                    </label>
                  ))}
                </div>
              )}
              <button
                type="button"
                disabled={busy || pickedMembers.length === 0}
                onClick={() =>
                  send(
                    `${pickedMembers.length} member${pickedMembers.length === 1 ? "" : "s"} assigned to ${name}`,
                    () =>
                      call("post", "/guardrails/{id}/assignments/members", {
                        path: { id },
                        body: { member_user_ids: pickedMembers },
                      }),
                    () => setPickedMembers([]),
                  )
                }
              >
                Assign selected members
              </button>
            </fieldset>
          </section>
        )}
      </div>
    </div>
  );
}
