/**
 * POSIX signal numbers on Linux, and what a shell's exit code above 128 says: `sh -c` reports a
 * command that a signal ended as 128 + the signal's number (137: SIGKILL, which is also what the
 * kernel's out-of-memory killer sends). Pure, importing nothing.
 */

/** Signal names to numbers (Linux). */
export const SIGNAL_NUMBERS: Readonly<Record<string, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGXCPU: 24,
  SIGXFSZ: 25,
};

/** What a signal usually means when it ends a gate or a test run. */
const SIGNAL_MEANING: Readonly<Record<string, string>> = {
  SIGKILL: "killed: the kernel's out-of-memory killer sends this, or a kill -9",
  SIGSEGV: "crashed (segmentation fault)",
  SIGBUS: "crashed (bus error)",
  SIGILL: "crashed (illegal instruction)",
  SIGFPE: "crashed (arithmetic error)",
  SIGABRT: "aborted",
  SIGXCPU: "over its CPU time limit",
  SIGXFSZ: "over its file size limit",
  SIGTERM: "terminated",
  SIGINT: "interrupted",
  SIGHUP: "hung up",
  SIGPIPE: "wrote to a closed pipe",
};

/** The name of signal `n` (`SIGKILL` for 9), undefined when not in the table. */
export function signalName(n: number): string | undefined {
  return Object.entries(SIGNAL_NUMBERS).find(([, v]) => v === n)?.[0];
}

/**
 * A shell's exit code in words: `exit 137: SIGKILL — killed: …` when the code is 128 + a known
 * signal's number, else `exit <code>`. (A program may exit 137 on its own: "likely" is the most
 * a code can say, so the words name the signal the code stands for, not a certainty.)
 */
export function shellExitWords(code: number): string {
  const name = code > 128 && code < 128 + 65 ? signalName(code - 128) : undefined;
  if (!name) return `exit ${code}`;
  return `exit ${code}: ${name}, ${SIGNAL_MEANING[name] ?? "a signal"}`;
}
