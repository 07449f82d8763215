/** A request string quoted for an error message, cut to 64 characters (messages never echo a payload). */
export const shown = (s: string): string => JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);
