import type { Command } from "commander";
import { DomainError } from "../../domain/errors.js";
import { checkMemberName, checkMemberRole, normaliseEmail } from "../../domain/members/member-input.js";
import type { MemberRecord } from "../../domain/members/member-record.js";
import {
  createMember,
  deleteMember,
  findMemberByRef,
  listMembers,
} from "../../domain/members/member-service.js";
import { systemClock } from "../../lib/clock.js";
import type { CliIo } from "../cli-io.js";
import { UsageError } from "../usage-error.js";
import { resolveOrganization } from "../with-all-stores.js";
import { withStore } from "../with-record-store.js";

/** A rule of a member's fields broken on the command line: a usage error (exit 2) naming the option. */
function option<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof DomainError && e.status === 400) throw new UsageError(e.message);
    throw e;
  }
}

const ORG_OPTION = ["--org <id>", "organization id (default: the first organization)"] as const;

const fullName = (m: MemberRecord) => [m.first_name, m.last_name].filter((x) => x !== null).join(" ");

/**
 * `gatehouse members add|list|remove`: the people of an organization (docs/members.md), written to
 * the record store directly, like the API's `POST/DELETE /api/v1/organization/members` (Gatehouse's
 * own extension). A running server on PostgreSQL hears of the change at once; on SQLite its cache
 * of guardrail assignments catches up within a minute.
 */
export function registerMembers(program: Command, io: CliIo): void {
  const members = program.command("members").description("manage the members (people) of an organization");

  members
    .command("add")
    .description("add a member to an organization")
    .requiredOption("--email <email>", "email address (stored lower-cased, unique in the organization)")
    .option("--first-name <name>", "first name")
    .option("--last-name <name>", "last name")
    .option("--role <role>", "org:admin or org:member", "org:member")
    .option(...ORG_OPTION)
    .option("--json", "print the member as one JSON object")
    .action(
      async (opts: {
        email: string;
        firstName?: string;
        lastName?: string;
        role: string;
        org?: string;
        json?: boolean;
      }) => {
        // Every option first, as usage errors: before the store is opened.
        const input = option(() => ({
          email: normaliseEmail(opts.email, "--email"),
          first_name: checkMemberName(opts.firstName ?? null, "--first-name"),
          last_name: checkMemberName(opts.lastName ?? null, "--last-name"),
          role: checkMemberRole(opts.role, "--role"),
        }));
        const { org, member } = await withStore(io, async (store) => {
          const org = await resolveOrganization(store, opts.org);
          return { org, member: await createMember(store, systemClock, org.id, input) };
        });
        if (opts.json) {
          io.out(JSON.stringify({ organization_id: org.id, ...member }) + "\n");
          return;
        }
        io.out(
          [
            `Member ${member.email} added to "${org.name}".`,
            "",
            `  id:               ${member.id}`,
            `  email:            ${member.email}`,
            `  name:             ${fullName(member) || "-"}`,
            `  role:             ${member.role}`,
            `  organization_id:  ${org.id}`,
            "",
            "Keys name their member with creator_user_id; guardrails can be assigned to the member.",
            "",
          ].join("\n"),
        );
      },
    );

  members
    .command("list")
    .description("list the members of an organization (id, email, role, name)")
    .option(...ORG_OPTION)
    .option("--json", "print a JSON array")
    .action(async (opts: { org?: string; json?: boolean }) => {
      const { org, rows } = await withStore(io, async (store) => {
        const org = await resolveOrganization(store, opts.org);
        const rows: MemberRecord[] = [];
        for (;;) {
          const page = await listMembers(store, org.id, rows.length, 100);
          rows.push(...page.data);
          if (page.data.length < 100) return { org, rows };
        }
      });
      if (opts.json) {
        io.out(JSON.stringify(rows) + "\n");
        return;
      }
      if (rows.length === 0) {
        io.out(`"${org.name}" has no members yet. Add one with: gatehouse members add --email EMAIL\n`);
        return;
      }
      const widths = [
        Math.max(2, ...rows.map((r) => r.id.length)),
        Math.max(5, ...rows.map((r) => r.email.length)),
        10,
      ];
      const line = (...cols: string[]) =>
        cols
          .map((c, i) => c.padEnd(widths[i] ?? 0))
          .join("  ")
          .trimEnd() + "\n";
      io.out(line("ID", "EMAIL", "ROLE", "NAME"));
      for (const r of rows) io.out(line(r.id, r.email, r.role, fullName(r)));
    });

  members
    .command("remove")
    .description("remove a member (by id or email) with its workspace memberships and guardrail assignment")
    .argument("<member>", "member id (user_…) or email")
    .option(...ORG_OPTION)
    .option("--json", "print the result as one JSON object")
    .action(async (ref: string, opts: { org?: string; json?: boolean }) => {
      const { org, member } = await withStore(io, async (store) => {
        const org = await resolveOrganization(store, opts.org);
        const row = await findMemberByRef(store, org.id, ref).catch((e: unknown) => {
          if (e instanceof DomainError && e.status === 404) {
            throw new Error(`no member ${ref} in "${org.name}" (${org.id}); see \`gatehouse members list\``);
          }
          throw e;
        });
        return { org, member: await deleteMember(store, systemClock, org.id, row.id) };
      });
      if (opts.json) {
        io.out(JSON.stringify({ deleted: true, organization_id: org.id, member }) + "\n");
        return;
      }
      io.out(`Member ${member.email} (${member.id}) removed from "${org.name}".\n`);
    });
}
