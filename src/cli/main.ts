import { processIo } from "./cli-io.js";
import { runCli } from "./run-cli.js";

/** Entry point of the `gatehouse` bin (bin/gatehouse.js) and of `npm run gatehouse --`. */
process.exitCode = await runCli(process.argv.slice(2), processIo);
