import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { TSchema } from "typebox";
import { describe, expect, it } from "vitest";
import { BudgetRecordSchema } from "../../src/domain/budgets/budget-record.js";
import { ByokKeyRecordSchema } from "../../src/domain/byok/byok-record.js";
import { DestinationRecordSchema } from "../../src/domain/destinations/destination-record.js";
import { CurrentKeySchema } from "../../src/domain/keys/current-key.js";
import { KeyRecordSchema } from "../../src/domain/keys/key-record.js";
import { WorkspaceRecordSchema } from "../../src/domain/workspaces/workspace-record.js";
import { BudgetListResponse, BudgetResponse } from "../../src/http/schemas/budgets.js";
import { ByokListResponse, ByokResponse } from "../../src/http/schemas/byok.js";
import { DestinationListResponse, DestinationResponse } from "../../src/http/schemas/destinations.js";
import {
  CreatedKeyResponse,
  CurrentKeyResponse,
  KeyListResponse,
  KeyResponse,
} from "../../src/http/schemas/keys.js";
import { WorkspaceListResponse, WorkspaceResponse } from "../../src/http/schemas/workspaces.js";

/**
 * Records once: a response record is one TypeBox schema in the domain, its TypeScript type is
 * `Static<>` of it, and the HTTP envelopes reuse that very schema (so serialisation, the OpenAPI
 * document, the dashboard's types and the domain's type cannot drift apart).
 */
const ROOT = resolve(import.meta.dirname, "../..");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const data = (envelope: TSchema): unknown => (envelope as { properties: { data: unknown } }).properties.data;
const items = (envelope: TSchema): unknown => (data(envelope) as { items: unknown }).items;

describe("records once", () => {
  it("every envelope of a record carries the domain's schema itself", () => {
    const pairs: [string, unknown, TSchema][] = [
      ["WorkspaceResponse", data(WorkspaceResponse), WorkspaceRecordSchema],
      ["WorkspaceListResponse", items(WorkspaceListResponse), WorkspaceRecordSchema],
      ["KeyResponse", data(KeyResponse), KeyRecordSchema],
      ["CreatedKeyResponse", data(CreatedKeyResponse), KeyRecordSchema],
      ["KeyListResponse", items(KeyListResponse), KeyRecordSchema],
      ["CurrentKeyResponse", data(CurrentKeyResponse), CurrentKeySchema],
      ["BudgetResponse", data(BudgetResponse), BudgetRecordSchema],
      ["BudgetListResponse", items(BudgetListResponse), BudgetRecordSchema],
      ["ByokResponse", data(ByokResponse), ByokKeyRecordSchema],
      ["ByokListResponse", items(ByokListResponse), ByokKeyRecordSchema],
      ["DestinationResponse", data(DestinationResponse), DestinationRecordSchema],
      ["DestinationListResponse", items(DestinationListResponse), DestinationRecordSchema],
    ];
    for (const [name, carried, record] of pairs) expect(carried, name).toBe(record);
  });

  it("no wire record in the domain or the gateway is a hand-written interface", () => {
    const offenders: string[] = [];
    for (const dir of ["src/domain", "src/gateway"]) {
      for (const file of files(join(ROOT, dir))) {
        const source = readFileSync(file, "utf8");
        for (const m of source.matchAll(/\binterface\s+(\w*Record)\b/g)) {
          offenders.push(`${relative(ROOT, file)}: ${m[1]}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});
