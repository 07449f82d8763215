// Entry of an ingest worker thread (prepare-pool.ts): registers tsx's loader in this thread, as
// bin/gatehouse.js does for the CLI, then runs the TypeScript worker.
import { register } from "tsx/esm/api";

register();
await import("./prepare-worker.ts");
