import type { Command } from "commander";
import { createOrganization } from "../../domain/organizations/create-organization.js";
import { hashKey } from "../../lib/ids.js";
import { systemClock } from "../../lib/clock.js";
import type { CliIo } from "../cli-io.js";
import { parseName } from "../validate-args.js";
import { withStore } from "../with-record-store.js";

/**
 * `gatehouse org create NAME`: a new organization with its default workspace and first management
 * key. The key is printed once, on stdout, and never stored in plain text.
 */
export function registerOrgCreate(org: Command, io: CliIo): void {
  org
    .command("create")
    .description("create an organization with its default workspace and first management key")
    .argument("<name>", "display name of the organization")
    .option("--json", "print the result as one JSON object")
    .action(async (rawName: string, opts: { json?: boolean }) => {
      const name = parseName("NAME", rawName);
      const created = await withStore(io, (store) => createOrganization(store, systemClock, name));
      const result = {
        organization_id: created.organizationId,
        name,
        workspace_id: created.workspaceId,
        management_key: created.managementKey,
        management_key_hash: hashKey(created.managementKey),
      };
      if (opts.json) {
        io.out(JSON.stringify(result) + "\n");
        return;
      }
      io.out(
        [
          `Organization "${name}" created.`,
          "",
          `  organization_id:  ${result.organization_id}`,
          `  workspace_id:     ${result.workspace_id}  (default workspace)`,
          `  management_key:   ${result.management_key}`,
          `  key hash:         ${result.management_key_hash}`,
          "",
          "The management key is shown only this once; store it somewhere safe.",
          "",
        ].join("\n"),
      );
    });
}
