import type { Command } from "commander";
import { addManagementKey } from "../../domain/organizations/create-organization.js";
import { findHomeWorkspace } from "../../domain/workspaces/workspace-repo.js";
import { hashKey, keyLabel, newKeyString } from "../../lib/ids.js";
import { systemClock } from "../../lib/clock.js";
import type { CliIo } from "../cli-io.js";
import { parseName, parseUuid } from "../validate-args.js";
import { withStore } from "../with-record-store.js";
import { findOrganization } from "../../domain/organizations/organization-repo.js";

/** Raised when --org names no organization: the call was well formed, so exit code 1. */
export class OrganizationNotFound extends Error {
  override readonly name = "OrganizationNotFound";
}

/**
 * `gatehouse keys create-management --org ORG_ID [--name N]`: one more management key for an
 * organization, for rotation (create the new key, switch clients, then delete the old one through
 * the API). It belongs to the default workspace, or the oldest live one if that was deleted.
 */
export function registerKeysCreateManagement(keys: Command, io: CliIo): void {
  keys
    .command("create-management")
    .description("create a management key for an organization (printed once)")
    .requiredOption("--org <id>", "organization id (see `gatehouse org list`)")
    .option("--name <name>", "display name of the key", "Management key")
    .option("--json", "print the result as one JSON object")
    .action(async (opts: { org: string; name: string; json?: boolean }) => {
      const organizationId = parseUuid("--org", opts.org);
      const name = parseName("--name", opts.name);
      const key = newKeyString();
      const workspaceId = await withStore(io, (store) =>
        store.transaction(async (trx) => {
          if (!(await findOrganization(trx, organizationId)))
            throw new OrganizationNotFound(`organization ${organizationId} not found`);
          const ws = await findHomeWorkspace(trx, organizationId);
          if (!ws) throw new Error(`organization ${organizationId} has no live workspace to hold the key`);
          await addManagementKey(trx, {
            organizationId,
            workspaceId: ws.id,
            key,
            name,
            now: systemClock.now(),
          });
          return ws.id;
        }),
      );
      const result = {
        organization_id: organizationId,
        workspace_id: workspaceId,
        name,
        management_key: key,
        hash: hashKey(key),
        label: keyLabel(key),
      };
      if (opts.json) {
        io.out(JSON.stringify(result) + "\n");
        return;
      }
      io.out(
        [
          `Management key "${name}" created.`,
          "",
          `  organization_id:  ${result.organization_id}`,
          `  workspace_id:     ${result.workspace_id}`,
          `  management_key:   ${result.management_key}`,
          `  key hash:         ${result.hash}`,
          "",
          "The key is shown only this once; store it somewhere safe. To rotate, switch your clients",
          "to this key, then delete the old one (DELETE /api/v1/keys/{hash}).",
          "",
        ].join("\n"),
      );
    });
}
