import {
  isObject,
  optArray,
  optBool,
  optObject,
  optString,
  refuse,
  reqString,
  type Json,
} from "./body-fields.js";

/**
 * Responses tools → chat tools, and `tool_choice` → the chat `tool_choice`
 * (docs/surfaces/responses.md "Tools").
 *
 * - A flat function tool `{type:"function", name, description?, parameters, strict?}` becomes the
 *   chat `{type:"function", function:{name, description, parameters, strict}}`.
 * - A `namespace` tool groups functions under a name (Codex's `multi_agent_v1`). Chat has no
 *   namespaces, so each of its functions becomes a chat function named `<namespace>__<name>`:
 *   the flat name Codex itself uses where a namespace cannot be kept (a namespace's trailing and a
 *   name's leading underscores dropped around the `__`). The answer's call is mapped back through
 *   the table built here (ToolNames), never by splitting the name, so a flat function whose own
 *   name contains `__` stays what it is. The namespace's description is put before each
 *   function's, so the model still reads it.
 * - Hosted tools (web search, file search, code interpreter, computer use, image generation,
 *   shells, apply_patch, MCP, custom tools, `openrouter:*` server tools) run inside the hosted
 *   service; Gatehouse runs none of them: they are left out, and named in `leftOut`.
 */

/** The Responses name of a function the model may call. */
export interface ResponsesToolName {
  name: string;
  namespace?: string;
}

/** The chat name standing for function `name` of namespace `namespace`. */
export const namespacedChatName = (namespace: string, name: string): string =>
  `${namespace.replace(/_+$/, "")}__${name.replace(/^_+/, "")}`;

/** Which chat function names stand for a namespaced Responses function. */
export class ToolNames {
  private readonly namespaced = new Map<string, Required<ResponsesToolName>>();

  add(chatName: string, namespace: string, name: string): void {
    this.namespaced.set(chatName, { namespace, name });
  }

  /** The Responses function a chat tool call names (itself when it is not a namespaced one). */
  fromChat(chatName: string): ResponsesToolName {
    return this.namespaced.get(chatName) ?? { name: chatName };
  }
}

export interface ChatTools {
  /** The chat `tools`; undefined when there are none left. */
  tools: Json[] | undefined;
  names: ToolNames;
  /** Chat names of every function offered, to resolve a tool_choice against. */
  offered: Set<string>;
  /** The tools as the result object echoes them (as sent; a function's `parameters` is REQ there). */
  echo: unknown[];
  /** Tools left out, as `tools[<type>]`. */
  leftOut: string[];
}

function chatFunction(t: Json, path: string, name: string, prefix: string | null): Json {
  const description = optString(t, "description", `${path}.description`);
  const parameters = optObject(t, "parameters", `${path}.parameters`);
  const strict = optBool(t, "strict", `${path}.strict`);
  const described = prefix && description ? `${prefix}\n\n${description}` : (description ?? prefix);
  return {
    type: "function",
    function: {
      name,
      ...(described ? { description: described } : {}),
      ...(parameters ? { parameters } : {}),
      ...(strict !== undefined ? { strict } : {}),
    },
  };
}

/** `tools` of a Responses request → the chat tools, the name table and the echo. */
export function toolsToChat(tools: unknown[] | undefined): ChatTools {
  const out: ChatTools = {
    tools: undefined,
    names: new ToolNames(),
    offered: new Set(),
    echo: [],
    leftOut: [],
  };
  if (!tools) return out;
  const chat: Json[] = [];
  const offer = (fn: Json, path: string): void => {
    const name = (fn.function as Json).name as string;
    if (out.offered.has(name)) throw refuse(path, `a second function named ${JSON.stringify(name)}`);
    out.offered.add(name);
    chat.push(fn);
  };
  tools.forEach((t, i) => {
    const path = `tools[${i}]`;
    if (!isObject(t)) throw refuse(path, "must be an object");
    const type = reqString(t, "type", `${path}.type`);
    if (type === "function") {
      const name = reqString(t, "name", `${path}.name`);
      offer(chatFunction(t, path, name, null), `${path}.name`);
      out.echo.push({ ...t, parameters: t.parameters ?? null });
    } else if (type === "namespace") {
      const namespace = reqString(t, "name", `${path}.name`);
      const prefix = optString(t, "description", `${path}.description`) ?? null;
      const inner = optArray(t, "tools", `${path}.tools`) ?? [];
      inner.forEach((f, j) => {
        const p = `${path}.tools[${j}]`;
        if (!isObject(f)) throw refuse(p, "must be an object");
        const innerType = reqString(f, "type", `${p}.type`);
        if (innerType !== "function") {
          out.leftOut.push(`tools[${innerType}]`);
          return;
        }
        const name = reqString(f, "name", `${p}.name`);
        const chatName = namespacedChatName(namespace, name);
        out.names.add(chatName, namespace, name);
        offer(chatFunction(f, p, chatName, prefix), `${p}.name`);
      });
      out.echo.push(t);
    } else {
      // Hosted, and any type this version does not know: nothing here could run it.
      out.leftOut.push(`tools[${type}]`);
      out.echo.push(t);
    }
  });
  out.tools = chat.length > 0 ? chat : undefined;
  return out;
}

const CHOICE_MODES = new Set(["auto", "none", "required"]);

/** A function a tool_choice names → its chat name, which must be among the tools offered. */
function chosenFunction(c: Json, path: string, tools: ChatTools): string {
  const name = reqString(c, "name", `${path}.name`);
  const namespace = optString(c, "namespace", `${path}.namespace`);
  const chatName = namespace !== undefined ? namespacedChatName(namespace, name) : name;
  if (!tools.offered.has(chatName)) {
    throw refuse(`${path}.name`, `no function tool named ${JSON.stringify(name)} is in tools`);
  }
  return chatName;
}

const hostedChoice = (path: string, type: string) =>
  refuse(path, `${JSON.stringify(type)} is a hosted tool; Gatehouse runs no hosted tools and left it out`);

export interface ChatToolChoice {
  /** The chat `tool_choice`; undefined when the request had none. */
  choice: unknown;
  /** allowed_tools: the chat names the model may call (the chat tools are cut down to these). */
  allowed: Set<string> | null;
}

/**
 * `tool_choice` → chat: auto, none and required as they are; `{type:"function", name}` → the chat
 * `{type:"function", function:{name}}`; `allowed_tools` → its mode, with the chat tools cut down
 * to the allowed ones (the same effect on every provider, where chat's own allowed_tools is
 * OpenAI's alone). A choice of a hosted tool, which was left out, is refused.
 */
export function toolChoiceToChat(value: unknown, tools: ChatTools): ChatToolChoice {
  const path = "tool_choice";
  if (value === undefined || value === null) return { choice: undefined, allowed: null };
  if (typeof value === "string") {
    if (!CHOICE_MODES.has(value)) throw refuse(path, 'must be "auto", "none", "required" or an object');
    return { choice: value, allowed: null };
  }
  if (!isObject(value)) throw refuse(path, "must be a string or an object");
  const type = reqString(value, "type", `${path}.type`);
  if (type === "function") {
    return {
      choice: { type: "function", function: { name: chosenFunction(value, path, tools) } },
      allowed: null,
    };
  }
  if (type !== "allowed_tools") throw hostedChoice(`${path}.type`, type);
  const mode = reqString(value, "mode", `${path}.mode`);
  if (mode !== "auto" && mode !== "required") throw refuse(`${path}.mode`, 'must be "auto" or "required"');
  const list = optArray(value, "tools", `${path}.tools`);
  if (!list) throw refuse(`${path}.tools`, "required");
  const allowed = new Set<string>();
  list.forEach((t, i) => {
    const p = `${path}.tools[${i}]`;
    if (!isObject(t)) throw refuse(p, "must be an object");
    const tType = reqString(t, "type", `${p}.type`);
    if (tType !== "function") throw hostedChoice(`${p}.type`, tType);
    allowed.add(chosenFunction(t, p, tools));
  });
  return { choice: mode, allowed };
}
