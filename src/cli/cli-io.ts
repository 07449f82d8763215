/** What a command may touch: its output streams and the environment (never process.* directly). */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
  /** Standard input, for commands that read `-` (import). */
  stdin?: NodeJS.ReadableStream;
  /** stderr when it is a terminal (progress bars draw on it); absent otherwise. */
  tty?: NodeJS.WriteStream;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  env: process.env,
  stdin: process.stdin,
  ...(process.stderr.isTTY ? { tty: process.stderr } : {}),
};
