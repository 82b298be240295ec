/** The command-line conventions of DESIGN.md §8: `--help` everywhere, exit codes of spec §7.4. */

import type { ServedApp } from "../server/serve.ts";
import { UserFacingError } from "../errors.ts";

/** Exit codes of spec §7.4. */
export const EXIT = {
  ok: 0,
  error: 1,
  timeout: 124,
  permissionDenied: 126,
  notFound: 127,
  killed: 137,
} as const;

/** What a command can use besides its arguments. */
export interface CliContext {
  /** The workspace root (`--root`, default the workspace of the repository the current directory is in). */
  root: string;
  debug: boolean;
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** The HTTP apps, built at the edge (cli.ts hands in routes/_app.ts): lib/ never imports routes/. */
  apps: { server: ServedApp; gui: ServedApp };
}

/** One command (possibly two words, like `audit verify`). */
export interface Command {
  name: string;
  summary: string;
  /** Full `--help` text (usage and options). */
  help: string;
  run(args: string[], ctx: CliContext): Promise<number>;
}

/** A failure the user can fix: printed as one or two lines, no stack trace. */
export class CliError extends UserFacingError {
  constructor(message: string, exitCode: number = EXIT.error, fix?: string) {
    super(message, exitCode, fix);
    this.name = "CliError";
  }
}

/** True when colours are used (not under NO_COLOR, and standard output is a terminal). */
export function useColour(): boolean {
  return !Deno.env.get("NO_COLOR") && Deno.stdout.isTerminal();
}

/** ANSI colour helpers that honour NO_COLOR and non-terminals. */
export const colour = {
  red: (s: string) => (useColour() ? `\x1b[31m${s}\x1b[0m` : s),
  yellow: (s: string) => (useColour() ? `\x1b[33m${s}\x1b[0m` : s),
  green: (s: string) => (useColour() ? `\x1b[32m${s}\x1b[0m` : s),
  bold: (s: string) => (useColour() ? `\x1b[1m${s}\x1b[0m` : s),
  dim: (s: string) => (useColour() ? `\x1b[2m${s}\x1b[0m` : s),
};
