/**
 * Exits of agent CLIs that fail the same way on every attempt (pure): bad or unselected
 * credentials, an untrusted folder, a configuration or input error, a model the provider does
 * not know. The orchestrator's retry policy asks {@link permanentExit} before it retries, so a
 * run fails at once with the CLI's own reason instead of three identical failures.
 */

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

/** The human part of a log line: `error.message` or `message` of a JSON line, else the line. */
export function logLineMessage(line: string): string {
  const t = line.trim();
  if (!t.startsWith("{")) return t;
  try {
    const v = JSON.parse(t);
    const msg = v?.error?.message ?? v?.message;
    if (typeof msg !== "string") return t;
    // Gemini wraps the provider's JSON body in "[API Error: …]": keep the provider's message.
    const inner = /"message":\s*"((?:[^"\\]|\\.)*)"/.exec(msg);
    return (inner ? JSON.parse(`"${inner[1]}"`) : msg).trim();
  } catch {
    return t;
  }
}

function saidBy(rule: ExitRule, tail: readonly string[]): string | undefined {
  const lines = tail.filter((l) => l.trim() !== "");
  const line = rule.pattern ? lines.findLast((l) => rule.pattern!.test(l)) : undefined;
  return line === undefined ? undefined : logLineMessage(line).slice(0, 300);
}

/**
 * The verdict on an agent's non-zero exit when it will repeat on every attempt, from the exit
 * code and the last lines of its log; undefined when another attempt may fare better.
 */
export function permanentExit(
  adapter: string | undefined,
  exitCode: number,
  logTail: readonly string[] = [],
): PermanentExit | undefined {
  if (exitCode === 0) return undefined;
  const text = logTail.join("\n");
  const rule = RULES.find((r) =>
    (r.adapter === undefined || r.adapter === adapter) &&
    (r.code === undefined || r.code === exitCode) &&
    (r.pattern === undefined || r.pattern.test(text))
  );
  if (!rule) return undefined;
  const said = saidBy(rule, logTail);
  return said ? { ...rule.verdict, said } : rule.verdict;
}
