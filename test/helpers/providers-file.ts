import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One model line of a providers file, in the file's own field names (docs/gateway.md). */
export interface FileModel {
  id: string;
  provider: string;
  upstream_model: string;
  prompt_price: number | string;
  /** Absent for an embedding model. */
  completion_price?: number | string;
  cache_read_price?: number | string;
  cache_write_price?: number | string;
  kind?: "chat" | "embedding";
  name?: string;
  context_length?: number;
  max_completion_tokens?: number;
  supported_parameters?: string[];
}

export interface WrittenProvidersFile {
  /** For GATEHOUSE_PROVIDERS_FILE. */
  path: string;
  remove(): void;
}

/**
 * Writes a GATEHOUSE_PROVIDERS_FILE to a temporary directory, as an operator would: providers as
 * given, models with context_length 8192 and max_completion_tokens 1024 unless given.
 */
export function writeProvidersFile(
  providers: Record<string, unknown>[],
  models: FileModel[],
): WrittenProvidersFile {
  const dir = mkdtempSync(join(tmpdir(), "gh-providers-"));
  const path = join(dir, "providers.json");
  writeFileSync(
    path,
    JSON.stringify({
      providers,
      // An embedding model has no completion: no default maximum for it.
      models: models.map((m) => ({
        context_length: 8192,
        ...(m.kind === "embedding" ? {} : { max_completion_tokens: 1024 }),
        ...m,
      })),
    }),
  );
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
