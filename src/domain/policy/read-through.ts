import type { Db } from "../../stores/record-store.js";
import { PolicyCache } from "./policy-cache.js";
import { recordStoreLoader } from "./policy-loader.js";
import type { Policy } from "./policy.js";

/** Policy read from the record store on every call (nothing kept): for one-shot processes and tests. */
export function readThroughPolicy(db: Db): Policy {
  return new PolicyCache(recordStoreLoader(db), { channel: null, positiveTtlMs: 0, negativeTtlMs: 0 });
}
