import type { Command } from "commander";
import { listOrganizations } from "../../domain/organizations/organization-repo.js";
import type { CliIo } from "../cli-io.js";
import { withStore } from "../with-record-store.js";

/** `gatehouse org list`: every organization, oldest first. Keys are never listed. */
export function registerOrgList(org: Command, io: CliIo): void {
  org
    .command("list")
    .description("list organizations (id, name, created_at)")
    .option("--json", "print a JSON array")
    .action(async (opts: { json?: boolean }) => {
      const rows = await withStore(io, (store) => listOrganizations(store.db));
      if (opts.json) {
        io.out(JSON.stringify(rows) + "\n");
        return;
      }
      if (rows.length === 0) {
        io.out("No organizations yet. Create one with: gatehouse org create NAME\n");
        return;
      }
      const idWidth = 36;
      const nameWidth = Math.max(4, ...rows.map((r) => r.name.length));
      const line = (id: string, name: string, at: string) =>
        `${id.padEnd(idWidth)}  ${name.padEnd(nameWidth)}  ${at}`.trimEnd() + "\n";
      io.out(line("ID", "NAME", "CREATED_AT"));
      for (const r of rows) io.out(line(r.id, r.name, r.created_at));
    });
}
