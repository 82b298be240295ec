/**
 * Errors of the agent side, named as in spec §7.3 so that `String(err)` reads like the spec
 * (`RuntimeError: binary not found in PATH: claude`). Each carries the fix in `fix`.
 */
import { UserFacingError } from "../errors.ts";
import { printableLines } from "../util/printable.ts";

/** A configuration value is wrong (e.g. an unknown adapter name); the CLI prints its fix. */
export class ValueError extends UserFacingError {
  override readonly fix: string;
  constructor(message: string, fix = "") {
    super(message, 1, fix || undefined);
    this.fix = fix;
    this.name = "ValueError";
  }
}

/**
 * The environment cannot run the agent (binary missing, not executable, key unset); `exitCode`
 * follows spec §7.4 (127 not found, 126 permission denied, 1 otherwise).
 */
export class RuntimeError extends UserFacingError {
  override readonly fix: string;
  constructor(message: string, fix = "", exitCode = 1) {
    super(message, exitCode, fix || undefined);
    this.fix = fix;
    this.name = "RuntimeError";
  }
}

/**
 * The agent died at start: it exited within the fast-exit probe window. The message quotes the
 * last lines of its log — the agent's own output — escaped line by line and set behind `│`, so
 * wherever the message is printed they cannot erase or fake a line of the terminal.
 */
export class SpawnError extends UserFacingError {
  readonly logPath: string;
  readonly logTail: string[];

  constructor({ message, logPath, logTail, exitCode }: SpawnFailure) {
    const tail = logTail.flatMap(printableLines).map((l) => `  │ ${l}`);
    super([message, `log: ${logPath}`, ...tail].join("\n"), exitCode);
    this.name = "SpawnError";
    this.logPath = logPath;
    this.logTail = logTail;
  }
}

/** What a {@link SpawnError} tells: what happened, the agent's log and its last lines, the exit. */
export interface SpawnFailure {
  message: string;
  logPath: string;
  /** The log's last lines, as the agent wrote them (escaped when shown). */
  logTail: string[];
  exitCode: number;
}
