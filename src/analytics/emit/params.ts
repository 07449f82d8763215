import type { Expr, ParamType } from "./tree.js";

export type ParamValue = string | number;

/**
 * Collects bound values; names are generated (p0, p1, ...), never taken from a request. A value
 * bound twice with the same type reuses its placeholder.
 */
export class ParamBag {
  readonly values: Record<string, ParamValue> = {};
  private readonly names = new Map<string, string>();

  private name(value: ParamValue, type: string): string {
    const key = JSON.stringify([type, typeof value, value]);
    let name = this.names.get(key);
    if (name === undefined) {
      name = `p${this.names.size}`;
      this.names.set(key, name);
      this.values[name] = value;
    }
    return name;
  }

  add(value: ParamValue, type: ParamType): Expr {
    return { t: "param", name: this.name(value, type), type };
  }

  time(ms: number): Expr {
    return { t: "time_param", name: this.name(ms, "time") };
  }
}
