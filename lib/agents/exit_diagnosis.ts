/**
 * Exits of agent CLIs that fail the same way on every attempt (pure): bad or unselected
 * credentials, an untrusted folder, a configuration or input error, a model the provider does
 * not know. The orchestrator's retry policy asks {@link permanentExit} before it retries, so a
 * run fails at once with the CLI's own reason instead of three identical failures. It reads the
 * events of the log's last lines (its adapter parsed them, ./session_events.ts), and only what
 * the CLI itself said: plain lines, errors and other records, never a tool's output or the
 * model's words (an agent that tested an "invalid api key" message is not unauthorised).
 */
import type { SessionEvent } from "./session_events.ts";

/** Why an exit will repeat, for the card's receipt and the operator. */
export interface PermanentExit {
  /** `auth`, `trust`, `config`, `input` or `model`. */
  cause: "auth" | "trust" | "config" | "input" | "model";
  /** What to do about it. */
  fix: string;
  /** The CLI's own words: the message of the last log line that names the failure. */
  said?: string;
}

interface ExitRule {
  /** Adapter name; undefined: any adapter. */
  adapter?: string;
  /** Exit code; undefined: any non-zero code. */
  code?: number;
  /** Matched against the log tail; undefined: the code alone decides. */
  pattern?: RegExp;
  verdict: PermanentExit;
}

const AUTH_FIX = "check the provider key variables (`service agents` names them) and run again";

/** Gemini CLI 0.61 exit codes (`ExitCodes` in its source) and the log lines of the others. */
const RULES: readonly ExitRule[] = [
  {
    adapter: "gemini",
    code: 41,
    verdict: {
      cause: "auth",
      fix: "Gemini refused its auth: set GEMINI_API_KEY (or select an auth type in " +
        "~/.gemini/settings.json); `service agents` checks it",
    },
  },
  {
    adapter: "gemini",
    code: 42,
    verdict: { cause: "input", fix: "Gemini refused its input: read the log for the argument" },
  },
  {
    adapter: "gemini",
    code: 44,
    verdict: { cause: "config", fix: "Gemini's sandbox could not start: check GEMINI_SANDBOX" },
  },
  {
    adapter: "gemini",
    code: 52,
    verdict: { cause: "config", fix: "Gemini's settings are invalid: fix ~/.gemini/settings.json" },
  },
  {
    adapter: "gemini",
    code: 55,
    verdict: {
      cause: "trust",
      fix: "Gemini does not trust the worktree: the adapter passes --skip-trust; set " +
        "GEMINI_CLI_TRUST_WORKSPACE=true for a generic gemini command",
    },
  },
  {
    pattern:
      /\b401\b[^\n]*unauthori[sz]ed|\bunauthori[sz]ed\b[^\n]*\b401\b|invalid[_ ]api[_ ]key|incorrect api key|api key not valid|UNAUTHENTICATED|authentication_error|no codex credentials were found|invalid auth method selected|please set an auth method/i,
    verdict: { cause: "auth", fix: AUTH_FIX },
  },
  {
    pattern: /model_not_found|\bmodel\b[^\n]*\b(does not exist|not found|is not supported)\b/i,
    verdict: { cause: "model", fix: "set `model:` in service.yaml to a model the provider offers" },
  },
  {
    pattern: /not running in a trusted directory|untrusted (folder|workspace|directory)/i,
    verdict: {
      cause: "trust",
      fix:
        "trust the worktree for the CLI (gemini: --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true)",
    },
  },
];

/** What the CLI itself said on a line: the error's message, or the line. */
export function saidOn(event: SessionEvent): string {
  if (event.kind === "error") return event.message;
  if (event.kind === "record" && event.message !== undefined) return event.message;
  return event.raw.trim();
}

/** The events of the CLI's own lines (not tool traffic, the model's words or usage). */
function ownLines(events: readonly SessionEvent[]): SessionEvent[] {
  return events.filter((e) =>
    (e.kind === "text" || e.kind === "error" || e.kind === "record") && e.raw.trim() !== ""
  );
}

/**
 * The words of the line that matched `rule`: the CLI's own error event among them, else the
 * last. A CLI that reports an error both in its JSON output and on stderr (Gemini: its result,
 * then "Error when talking to Gemini API Full report available at …") interleaves the two
 * streams in whatever order they were read, so the last one alone is not always the same.
 */
function saidBy(rule: ExitRule, lines: readonly SessionEvent[]): string | undefined {
  if (!rule.pattern) return undefined;
  const matching = lines.filter((e) => rule.pattern!.test(e.raw));
  const line = matching.findLast((e) => e.kind === "error") ?? matching.at(-1);
  return line === undefined ? undefined : saidOn(line).slice(0, 300);
}

/**
 * The verdict on an agent's non-zero exit when it will repeat on every attempt, from the exit
 * code and the events of the last lines of its log; undefined when another attempt may fare
 * better.
 */
export function permanentExit(
  adapter: string | undefined,
  exitCode: number,
  tail: readonly SessionEvent[] = [],
): PermanentExit | undefined {
  if (exitCode === 0) return undefined;
  const lines = ownLines(tail);
  const text = lines.map((e) => e.raw).join("\n");
  const rule = RULES.find((r) =>
    (r.adapter === undefined || r.adapter === adapter) &&
    (r.code === undefined || r.code === exitCode) &&
    (r.pattern === undefined || r.pattern.test(text))
  );
  if (!rule) return undefined;
  const said = saidBy(rule, lines);
  return said ? { ...rule.verdict, said } : rule.verdict;
}
