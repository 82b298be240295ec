/**
 * Why an agent that ended without reporting did so (pure): the line the operator reads and the
 * orphan's summary.
 */
import { FAST_EXIT_WINDOW_MS } from "../agents/process.ts";

/** How the agent ended. */
export interface AgentEnd {
  exitCode: number;
  durationMs: number;
  rateLimited: boolean;
  /** Why the orchestrator ended it, when it did. */
  endedBy?: "timeout" | "stop" | "rate_limit" | "reported";
  logPath: string;
}

/** The reason, and whether it was the fast-exit probe (spec §7.3 SpawnError). */
export function exitReason(end: AgentEnd): { reason: string; fastExit: boolean } {
  if (end.rateLimited) {
    return { reason: "rate limited: the task resumes after the cooldown", fastExit: false };
  }
  if (end.endedBy === "timeout") {
    return { reason: `agent timed out (exit ${end.exitCode}); partial work kept`, fastExit: false };
  }
  if (end.endedBy === "stop") return { reason: "run stopped", fastExit: false };
  if (end.durationMs < FAST_EXIT_WINDOW_MS && end.exitCode !== 0) {
    return {
      reason: `SpawnError: agent exited within 2s (exit ${end.exitCode}); read ${end.logPath}`,
      fastExit: true,
    };
  }
  return {
    reason: `agent exited (code ${end.exitCode}) without reporting completion`,
    fastExit: false,
  };
}
