import { keepNewFilesPrivate } from "../lib/private-files.js";
import { processIo } from "./cli-io.js";
import { runCli } from "./run-cli.js";

/** Entry point of the `gatehouse` bin (bin/gatehouse.js) and of `npm run gatehouse --`. */
// The CLI creates and writes the same data files as the server (import, demo, replay).
keepNewFilesPrivate();
process.exitCode = await runCli(process.argv.slice(2), processIo);
