import { useEffect, useRef, useState } from "preact/hooks";
import type { Capabilities } from "../api/capabilities.ts";
import { call, errorText } from "../api/client.ts";
import { allGuardrails, allMemberAssignments, guardrailHref, type Guardrail } from "../api/guardrails.ts";
import { allMembers, memberName, type Member } from "../api/members.ts";
import type { Workspace } from "../api/types.ts";
import { allWorkspaces } from "../api/workspaces.ts";
import { ConfirmButton, FormError, InputField, SelectField, useForm } from "../components/form.tsx";
import { ErrorNote, Loading } from "../components/ui.tsx";
import { WorkspaceMembers } from "../components/WorkspaceMembers.tsx";

/**
 * The organization's members (docs/members.md): people that keys (`creator_user_id`) and
 * guardrails are about. Listed, added and edited (Gatehouse's own API extension), deleted after a
 * confirmation (the API refuses while the member has active keys, and says so); each workspace's
 * members listed, added and removed. Nobody signs in as a member yet.
 */
type Role = Member["role"];
const ROLES: readonly (readonly [Role, string])[] = [
  ["org:member", "member"],
  ["org:admin", "admin"],
];

export function Members({ caps }: { caps: Capabilities }) {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [workspaces, setWorkspaces] = useState<Workspace[]>([]);
  /** Member id → the guardrail assigned to the member. */
  const [guardrailOf, setGuardrailOf] = useState<Map<string, Guardrail>>(new Map());
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  const table = useRef<HTMLDivElement>(null);

  const load = () => allMembers().then(setMembers, (e: unknown) => setError(errorText(e)));
  const loadGuardrails = () =>
    caps.guardrails
      ? Promise.all([allGuardrails(), allMemberAssignments()]).then(
          ([gs, as]) => {
            const byId = new Map(gs.map((g) => [g.id, g]));
            const out = new Map<string, Guardrail>();
            for (const a of as) {
              const g = byId.get(a.guardrail_id);
              if (g) out.set(a.user_id, g);
            }
            setGuardrailOf(out);
          },
          () => undefined,
        )
      : undefined;
  useEffect(() => {
    void load();
    void loadGuardrails();
    if (caps.workspaceMembers) allWorkspaces().then(setWorkspaces, (e: unknown) => setError(errorText(e)));
  }, []);

  const change = (done: string, send: () => Promise<unknown>, removesRow = false) => {
    setError(null);
    send().then(
      () => {
        setStatus(done);
        void load().then(() => removesRow && table.current?.focus());
        if (removesRow) void loadGuardrails();
      },
      (e: unknown) => setError(errorText(e)),
    );
  };

  return (
    <section aria-labelledby="members-title">
      <h1 id="members-title">Members</h1>
      <p class="help">
        The people of the organization. A key's creator (<code>creator_user_id</code>) names a member, and a
        guardrail assigned to a member governs every key the member created. Nobody signs in as a member yet:
        management keys do the managing.
      </p>
      <details class="panel">
        <summary>Add a member</summary>
        <AddMember
          onAdded={(m) => {
            setStatus(`${memberName(m)} added`);
            void load();
          }}
        />
      </details>
      <ErrorNote error={error} />
      <p class="sr-only" role="status">
        {status}
      </p>
      {!members ? (
        <Loading what="members" />
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Members" ref={table}>
          <table class="stack">
            <caption>Members ({members.length})</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                {caps.guardrails && <th scope="col">Guardrail</th>}
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {members.length === 0 && (
                <tr>
                  <td colSpan={5}>No members yet.</td>
                </tr>
              )}
              {members.map((m) => {
                const who = memberName(m);
                const g = guardrailOf.get(m.id);
                return (
                  <>
                    <tr key={m.id}>
                      <th scope="row">
                        {[m.first_name, m.last_name].filter(Boolean).join(" ") || (
                          <span class="muted">–</span>
                        )}
                      </th>
                      <td data-label="Email">{m.email}</td>
                      <td data-label="Role">{m.role === "org:admin" ? "admin" : "member"}</td>
                      {caps.guardrails && (
                        <td data-label="Guardrail">
                          {g ? <a href={guardrailHref(g.id)}>{g.name}</a> : "none"}
                        </td>
                      )}
                      <td class="actions">
                        <button
                          type="button"
                          class="secondary"
                          aria-expanded={editing === m.id}
                          aria-controls={`member-edit-${m.id}`}
                          onClick={() => setEditing(editing === m.id ? null : m.id)}
                        >
                          Edit<span class="sr-only"> {m.email}</span>
                        </button>
                        <ConfirmButton
                          label="Delete"
                          what={m.email}
                          question={`Delete the member ${who}? Their workspace memberships and guardrail assignment go with them. A member who still has active keys cannot be deleted.`}
                          confirmLabel="Delete member"
                          onConfirm={() =>
                            change(
                              `${who} deleted`,
                              () => call("delete", "/organization/members/{id}", { path: { id: m.id } }),
                              true,
                            )
                          }
                        />
                      </td>
                    </tr>
                    {editing === m.id && (
                      <tr key={`${m.id}-edit`} id={`member-edit-${m.id}`}>
                        <td colSpan={5}>
                          <EditMember
                            m={m}
                            onDone={(saved) => {
                              setEditing(null);
                              if (saved) setStatus(`${m.email} saved`);
                              void load();
                            }}
                          />
                        </td>
                      </tr>
                    )}
                  </>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {caps.workspaceMembers && members && workspaces.length > 0 && (
        <WorkspaceMembers workspaces={workspaces} members={members} />
      )}
    </section>
  );
}

/** Names: an empty field is sent as null (none), since the API refuses a blank name. */
const nameOrNull = (v: string) => (v.trim() === "" ? null : v);

function AddMember({ onAdded }: { onAdded: (m: Member) => void }) {
  const [email, setEmail] = useState("");
  const [first, setFirst] = useState("");
  const [last, setLast] = useState("");
  const [role, setRole] = useState<Role>("org:member");
  const form = useForm();
  const submit = form.submit(() =>
    call("post", "/organization/members", {
      body: { email, first_name: nameOrNull(first), last_name: nameOrNull(last), role },
    }).then((r) => {
      setEmail("");
      setFirst("");
      setLast("");
      onAdded(r.data);
    }),
  );
  return (
    <form onSubmit={submit} class="row" aria-label="New member">
      <InputField
        id="new-member-email"
        label="Email"
        field="email"
        form={form}
        required
        value={email}
        onValue={setEmail}
      />
      <InputField label="First name" field="first_name" form={form} value={first} onValue={setFirst} />
      <InputField label="Last name" field="last_name" form={form} value={last} onValue={setLast} />
      <SelectField
        label="Role"
        field="role"
        form={form}
        value={role}
        onValue={(v) => setRole(v as Role)}
        options={ROLES}
      />
      <button type="submit" disabled={form.busy}>
        Add member
      </button>
      <FormError form={form} />
    </form>
  );
}

function EditMember({ m, onDone }: { m: Member; onDone: (saved: boolean) => void }) {
  const [first, setFirst] = useState(m.first_name ?? "");
  const [last, setLast] = useState(m.last_name ?? "");
  const [role, setRole] = useState<Role>(m.role);
  const form = useForm();
  const submit = form.submit(
    () =>
      call("patch", "/organization/members/{id}", {
        path: { id: m.id },
        body: { first_name: nameOrNull(first), last_name: nameOrNull(last), role },
      }),
    () => onDone(true),
  );
  return (
    <form onSubmit={submit} class="row" aria-label={`Edit ${m.email}`}>
      <InputField label="First name" field="first_name" form={form} value={first} onValue={setFirst} />
      <InputField label="Last name" field="last_name" form={form} value={last} onValue={setLast} />
      <SelectField
        label="Role"
        field="role"
        form={form}
        value={role}
        onValue={(v) => setRole(v as Role)}
        options={ROLES}
        hint="reaches every workspace the member belongs to"
      />
      <button type="submit" disabled={form.busy}>
        Save
      </button>
      <button type="button" class="secondary" onClick={() => onDone(false)}>
        Cancel
      </button>
      <FormError form={form} />
    </form>
  );
}
