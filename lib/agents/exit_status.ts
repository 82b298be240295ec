/** Mapping of an agent's end to the exit codes of spec §7.4. Pure. */
import { SIGNAL_NUMBERS, signalName } from "../util/signal_numbers.ts";

/** Exit codes of spec §7.4 for agents. */
export const AGENT_EXIT = {
  ok: 0,
  error: 1,
  timeout: 124,
  permissionDenied: 126,
  notFound: 127,
  killedByShell: 137,
  sigint: -2,
  sigkill: -9,
  sigterm: -15,
} as const;

/** How a process ended. */
export interface ProcessEnd {
  code: number;
  signal: string | null;
  /** True when the watchdog killed it for exceeding its wall-clock timeout. */
  timedOut?: boolean;
}

/**
 * The spec §7.4 code: 124 for a watchdog timeout, `-N` for death by signal N (-2 SIGINT, -9
 * SIGKILL, -15 SIGTERM), otherwise the exit code itself (126, 127, and 137 when a shell reported
 * a SIGKILLed child, likely out of memory).
 */
export function agentExitCode(end: ProcessEnd): number {
  if (end.timedOut) return AGENT_EXIT.timeout;
  if (end.signal) return -(SIGNAL_NUMBERS[end.signal] ?? 1);
  return end.code;
}

/**
 * The signal a `-N` exit code names (`SIGKILL` for -9); undefined for any other code, and for
 * -1, which also stands for a signal without a number here.
 */
export function signalOfExit(code: number): string | undefined {
  if (code >= -1) return undefined;
  return signalName(-code);
}
