/**
 * A benchmark's numeric `--name value` option: the default when absent; a value that is not a
 * number stops the benchmark with a message naming the option (rather than running with NaN).
 */
export function numberOption(args: readonly string[]): (name: string, def: number) => number {
  return (name, def) => {
    const at = args.indexOf(`--${name}`);
    if (at < 0) return def;
    const value = Number(args[at + 1]);
    if (args[at + 1] === undefined || !Number.isFinite(value)) {
      throw new Error(`--${name}: expected a number (got ${JSON.stringify(args[at + 1] ?? null)})`);
    }
    return value;
  };
}

/** A benchmark's `--name value` option as text: the value, or null when the option is absent. */
export function stringOption(args: readonly string[]): (name: string) => string | null {
  return (name) => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? (args[at + 1] ?? null) : null;
  };
}
