import { inspect } from "node:util";

/**
 * A secret held in memory (a provider's API key, its extra headers) that prints as [redacted]
 * everywhere: JSON.stringify, template strings, console.log and pino. Only reveal() gives the
 * value, at the one place that sends it.
 */
export class Redacted<T = string> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  reveal(): T {
    return this.#value;
  }

  toJSON(): string {
    return "[redacted]";
  }

  toString(): string {
    return "[redacted]";
  }

  [inspect.custom](): string {
    return "[redacted]";
  }
}
