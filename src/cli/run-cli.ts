import { Command, CommanderError } from "commander";
import { ConfigError } from "../config/config.js";
import type { CliIo } from "./cli-io.js";
import { registerDemo } from "./commands/demo.js";
import { registerDestinations } from "./commands/destinations.js";
import { registerImport } from "./commands/import.js";
import { registerReconcile } from "./commands/reconcile.js";
import { registerKeysCreateManagement } from "./commands/keys-create-management.js";
import { registerMembers } from "./commands/members.js";
import { registerOrgCreate } from "./commands/org-create.js";
import { registerOrgCreditLine } from "./commands/org-credit-line.js";
import { registerOrgList } from "./commands/org-list.js";
import { EXIT, UsageError } from "./usage-error.js";

export function buildProgram(io: CliIo): Command {
  const program = new Command("gatehouse")
    .description("Gatehouse administration: organizations, members, management keys and activity")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();
  // Subcommands copy the settings above (output, exitOverride) when they are created.
  const org = program.command("org").description("manage organizations");
  registerOrgCreate(org, io);
  registerOrgList(org, io);
  registerOrgCreditLine(org, io);
  const keys = program.command("keys").description("manage API keys");
  registerKeysCreateManagement(keys, io);
  registerMembers(program, io);
  registerImport(program, io);
  registerDemo(program, io);
  registerReconcile(program, io);
  registerDestinations(program, io);
  return program;
}

/** Runs the CLI and returns its exit code: 0 success, 2 usage or configuration error, 1 otherwise. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are "errors" to commander; everything else was already printed by it.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof ConfigError) {
      io.err(`gatehouse: ${err.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof UsageError) {
      io.err(`gatehouse: ${err.message}\n`);
      return EXIT.usage;
    }
    io.err(`gatehouse: ${describeFailure(err)}\n`);
    return EXIT.failure;
  }
}

/** The message and its causes ("record store migration failed: connect ECONNREFUSED ..."). */
function describeFailure(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (e instanceof Error) {
      if (e.message) parts.push(e.message);
      e = e.cause;
    } else {
      parts.push(typeof e === "string" ? e : "unknown error");
      break;
    }
  }
  return parts.join(": ") || "unknown error";
}
