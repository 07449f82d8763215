import * as models from "@openrouter/sdk/models";
import * as operations from "@openrouter/sdk/models/operations";

/*
 * The SDK checks a request against its request schemas (its `$outboundSchema`s), whose Zod objects
 * silently drop the keys they do not know: a test that passes `max_tokens` (the wire name) where the
 * SDK wants `maxTokens` sends no max_tokens at all, and its assertions are about a request it never
 * made. Imported by server.ts, this makes every object in those schemas refuse an unknown key, so
 * such a call fails with the SDK's "Input validation failed" and Zod's `Unrecognized key:
 * "max_tokens"`. A key only one side of an intersection knows stays accepted (Zod reports a key
 * only both sides refuse), a union takes the option that knows every key, and the response
 * schemas (`$inboundSchema`) keep the SDK's leniency.
 *
 * It works on Zod's `_zod` internals (def.type, the run each parent calls on its children): a Zod
 * upgrade that changes them fails test/unit/sdk-strict.test.ts (an unknown key must be refused)
 * rather than leaving the guard a silent no-op.
 */

interface Payload {
  value: unknown;
  issues: unknown[];
}
interface Internals {
  def: Record<string, unknown> & { type: string };
  run: (payload: Payload, ctx: unknown) => Payload | Promise<Payload>;
}

const done = new WeakSet<object>();

function strict(schema: unknown): void {
  if (typeof schema !== "object" || schema === null || done.has(schema) || !("_zod" in schema)) return;
  done.add(schema);
  const z = (schema as { _zod: Internals })._zod;
  const def = z.def;
  switch (def.type) {
    case "object": {
      const shape = def.shape as Record<string, unknown>;
      if (!def.catchall) {
        const run = z.run;
        z.run = (payload, ctx) => {
          const input = payload.value;
          const unknown =
            typeof input === "object" && input !== null && !Array.isArray(input)
              ? Object.keys(input).filter((k) => !Object.hasOwn(shape, k))
              : [];
          const flag = (p: Payload): Payload => {
            if (unknown.length > 0)
              p.issues.push({ code: "unrecognized_keys", keys: unknown, input, inst: schema });
            return p;
          };
          const out = run(payload, ctx);
          return out instanceof Promise ? out.then(flag) : flag(out);
        };
      }
      for (const child of Object.values(shape)) strict(child);
      return;
    }
    case "pipe":
      strict(def.in);
      return;
    case "array":
      strict(def.element);
      return;
    case "union":
      for (const option of def.options as unknown[]) strict(option);
      return;
    case "intersection":
      strict(def.left);
      strict(def.right);
      return;
    case "record":
      strict(def.valueType);
      return;
    case "lazy":
      strict((def.getter as () => unknown)());
      return;
    default:
      // optional, nullable, default, readonly... wrap one schema; leaves have none.
      strict(def.innerType);
  }
}

for (const [name, schema] of Object.entries({ ...models, ...operations })) {
  if (name.endsWith("$outboundSchema")) strict(schema);
}
