/**
 * Why an agent that ended without reporting did so (pure): the kind on the card's receipt, the
 * line the operator reads (with the CLI's last error line, since that is what says what went
 * wrong) and whether another attempt could fare better.
 */
import { FAST_EXIT_WINDOW_MS } from "../agents/process.ts";
import { AGENT_EXIT, signalOfExit } from "../agents/exit_status.ts";
import type { ExitDiagnosis } from "./events.ts";
import type { EndReason } from "../agents/end_reason.ts";
import { clipLine, errorLine, lastErrorLine } from "../util/last_error_line.ts";
import { printable } from "../util/printable.ts";
import { permanentExit, saidOn } from "../agents/exit_diagnosis.ts";
import { logParserFor } from "../agents/adapters/mod.ts";
import { agentLines } from "./service_log_lines.ts";
import { diskFullSaid } from "../util/disk_full.ts";

/** How the agent ended. */
export interface AgentEnd {
  exitCode: number;
  durationMs: number;
  rateLimited: boolean;
  /** Why the orchestrator (or, `drain`, its stopping worker) ended it, when one did. */
  endedBy?: EndReason;
  logPath: string;
  /** The last lines of the agent's log (newest last). */
  logTail?: string[];
  /** The adapter that ran it (its exits that always repeat are known by name). */
  adapter?: string;
  /**
   * The kernel's OOM killer ended a process of its container, whose `memory_mb` this is (0: no
   * limit of its own).
   */
  outOfMemoryMb?: number;
  /** The prompt it was given: lines of its log that only repeat it are not its own words. */
  prompt?: string;
}

/** Shorter lines of a prompt ("```", a heading) may well be an agent's own words too. */
const ECHO_MIN_CHARS = 12;

/**
 * `tail` less the lines that repeat a line of `prompt`: a CLI that prints what it was asked
 * must not have the prompt's words ("If you cannot finish …", an earlier attempt's reason)
 * quoted as what went wrong. Pure.
 */
export function ownLines(tail: readonly string[], prompt: string | undefined): string[] {
  if (!prompt) return [...tail];
  const given = new Set(
    prompt.split("\n").map((l) => l.trim()).filter((l) => l.length >= ECHO_MIN_CHARS),
  );
  return tail.filter((l) => !given.has(l.trim()));
}

/** The diagnosis of an agent's end, and whether it was the fast-exit probe (spec §7.3). */
export function exitReason(end: AgentEnd): ExitDiagnosis & { fastExit: boolean } {
  // The CLI's own last error message (a structured CLI's JSON line read by its adapter), else
  // the last of its own plain lines that reads like an error — never the prompt, the model's
  // words or a tool call (a plain-text log: its last line). Printed, journaled and shown:
  // escaped (one line).
  // The service's own lines (its container header, setup steps) are not the agent's words.
  const logTail = ownLines(agentLines(end.logTail ?? []), end.prompt);
  const tail = logParserFor(end.adapter)(logTail.join("\n"));
  const error = tail.findLast((e) => e.kind === "error");
  const plain = tail.filter((e) => e.kind === "text").map((e) => e.raw);
  const line = error
    ? clipLine(saidOn(error).trim())
    : plain.length === tail.length
    ? lastErrorLine(logTail)
    : errorLine(plain);
  const said = line === undefined ? undefined : printable(line);
  const quote = said ? `: ${said}` : "";
  const signal = signalOfExit(end.exitCode);
  const oom = end.outOfMemoryMb === undefined
    ? ""
    : `, out of memory${end.outOfMemoryMb > 0 ? ` at memory_mb ${end.outOfMemoryMb}` : ""}`;
  const killed = (signal ? `, killed by ${signal}` : "") + oom;
  if (end.rateLimited) {
    return {
      kind: "rate_limited",
      reason: "rate limited: the task resumes after the cooldown",
      retryable: true,
      fastExit: false,
    };
  }
  if (end.endedBy === "timeout") {
    // What the CLI last said went wrong (a provider failing all along), never a tool's output.
    const own = error ? line : errorLine(plain);
    const last = own === undefined ? "" : `; its last error: ${printable(own)}`;
    return {
      kind: "agent_timeout",
      reason: `agent timed out (exit ${end.exitCode}); partial work kept${last}`,
      retryable: true,
      fastExit: false,
    };
  }
  if (end.endedBy === "stop") {
    return { kind: "agent_stopped", reason: "run stopped", retryable: true, fastExit: false };
  }
  if (end.endedBy === "drain") {
    return {
      kind: "agent_drained",
      reason: "drained: its worker was stopping",
      retryable: true,
      fastExit: false,
    };
  }
  // Exits that repeat on every attempt (auth, trust, config): not retried (lib/agents/exit_diagnosis.ts).
  const permanent = permanentExit(end.adapter, end.exitCode, tail);
  if (permanent) {
    return {
      kind: `agent_${permanent.cause}_error`,
      reason: `agent exited ${end.exitCode} (${permanent.cause} error): ${
        (permanent.said === undefined ? undefined : printable(permanent.said)) ?? said ??
          "no error line in its log"
      }; ${permanent.fix}`,
      retryable: false,
      fastExit: end.durationMs < FAST_EXIT_WINDOW_MS,
    };
  }
  if (end.exitCode === AGENT_EXIT.notFound || end.exitCode === AGENT_EXIT.permissionDenied) {
    const what = end.exitCode === AGENT_EXIT.notFound ? "command not found" : "permission denied";
    return {
      kind: "spawn_error",
      reason: `agent exited ${end.exitCode} (${what})${quote}`,
      retryable: false,
      fastExit: end.durationMs < FAST_EXIT_WINDOW_MS,
    };
  }
  // Its own writes failed on a full disk: its exit is its own (counted), but the reason says so.
  const full = diskFullSaid(logTail.join("\n"));
  const disk = full === undefined
    ? ""
    : `; the disk is full (${full}): free space on it, or the next attempt fails the same way`;
  if (end.durationMs < FAST_EXIT_WINDOW_MS && end.exitCode !== 0) {
    return {
      kind: "spawn_error",
      reason: `SpawnError: agent exited within 2s (exit ${end.exitCode}${killed})${quote}; ` +
        `read ${end.logPath}${disk}`,
      retryable: true,
      fastExit: true,
    };
  }
  return {
    kind: "agent_failed",
    reason:
      `agent exited (exit ${end.exitCode}${killed}) without reporting completion${quote}${disk}`,
    retryable: true,
    fastExit: false,
  };
}
