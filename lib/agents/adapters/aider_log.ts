/**
 * Aider's plain-text output (`--no-pretty`): after each message it reports
 * `Tokens: 2.3k sent, 120 received. Cost: $0.0076 message, $0.01 session.` The last session
 * cost is the total; tokens are summed over messages; the model is read from `Model: <name> …` or
 * `Main model: <name> …`. Every other line is plain text.
 */
import type { SessionEvent } from "../session_events.ts";
import { type LogFormat, parseLogWith, type Where } from "./_log.ts";

const MODEL = /^(?:Main )?[Mm]odel: (\S+)/;
const TOKENS =
  /Tokens: ([\d.,]+[kKmM]?) sent(?:, ([\d.,]+[kKmM]?) cache \w+)*, ([\d.,]+[kKmM]?) received/;
const COST = /Cost: \$([\d.]+) message, \$([\d.]+) session/;

/** `2.3k`, `1,200`, `1.5M` as a count. */
function tokenCount(s: string): number {
  const m = /^([\d.]+)([kKmM]?)$/.exec(s.replaceAll(",", ""));
  if (!m) return 0;
  const scale = m[2] === "" ? 1 : m[2].toLowerCase() === "k" ? 1_000 : 1_000_000;
  return Math.round(Number(m[1]) * scale);
}

/** Aider's text output. */
const aiderFormat: LogFormat = {
  usage() {
    let input = 0;
    let output = 0;
    let sessionUsd: number | undefined;
    let model = "unknown";
    let last: Where | undefined;
    return {
      text(at) {
        const mm = MODEL.exec(at.raw.trim());
        if (mm) model = mm[1];
        const t = TOKENS.exec(at.raw);
        if (t) {
          input += tokenCount(t[1]);
          output += tokenCount(t[3]);
          last = at;
        }
        const c = COST.exec(at.raw);
        if (c) {
          sessionUsd = Number(c[2]);
          last = at;
        }
      },
      end() {
        if (!last || (sessionUsd === undefined && input + output === 0)) return undefined;
        const tokens = { inputTokens: input, outputTokens: output };
        return sessionUsd === undefined
          ? { kind: "usage", ...last, models: { [model]: tokens } }
          : { kind: "usage", ...last, models: { [model]: tokens }, costUsd: sessionUsd };
      },
    };
  },
};

const AIDER = [aiderFormat];

/** The events of an Aider log. */
export function parseAiderLog(logText: string): SessionEvent[] {
  return parseLogWith(AIDER, logText);
}
