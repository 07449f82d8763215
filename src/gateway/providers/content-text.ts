/** The text of one message's content: a string, or its text parts joined (other parts as JSON). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        const part = p as { type?: unknown; text?: unknown };
        return part.type === "text" && typeof part.text === "string" ? part.text : JSON.stringify(p);
      })
      .join("\n");
  }
  return content === null || content === undefined ? "" : JSON.stringify(content);
}
