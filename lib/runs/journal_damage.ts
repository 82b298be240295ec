/**
 * How a run whose journal does not verify is described (pure), the same in `service status`,
 * `service runs`, the runs list (`GET /review-board/runs`), the board page and `service run`: which
 * line is bad and how, how many lines before it still verify, and what the user can do. Such a run
 * is never called resumable (every append to it is refused) and its last word is not taken as its
 * outcome: run journals are never repaired automatically (DESIGN.md §4–6).
 */
import type { ChainFault, FaultKind } from "../journal/verify.ts";
import type { JournalDamage } from "./summary_types.ts";

/** What is wrong with one line, by the kind of fault verification found there. */
const WHAT: Record<FaultKind, (line: number) => string> = {
  torn_tail: (line) => `its last line (${line}) is torn: cut off before its end`,
  unparseable: (line) => `line ${line} is not JSON`,
  shape: (line) => `line ${line} is not a journal row`,
  seq: (line) => `line ${line} is out of place (its seq is wrong: lines removed or reordered)`,
  prev: (line) =>
    `line ${line} does not chain onto the line before it (a line was removed, reordered or replaced)`,
  hash: (line) => `line ${line} was edited: its hash does not recompute`,
};

/** The damage `fault` describes (its `seq` is the 0-based line index of the first bad line). */
export function journalDamage(fault: ChainFault): JournalDamage {
  const line = fault.seq + 1;
  const before = fault.seq === 0 ? "no line before it verifies" : `lines 1–${fault.seq} verify`;
  return {
    kind: fault.kind,
    line,
    verified_lines: fault.seq,
    words: `${WHAT[fault.kind](line)}; ${before}`,
  };
}

/**
 * The damage of a run whose journal file is empty: a run writes `run_started` before anything
 * else, so its whole history was cut away — and an empty chain verifies, so without this a resume
 * would start a new chain there that verifies too (truncated, then extended).
 */
export const EMPTY_JOURNAL: JournalDamage = {
  kind: "empty",
  line: 1,
  verified_lines: 0,
  words: "its journal is empty: every row, its run_started first, was cut away",
};

/** The damage of a journal read whole: `fault` when its chain breaks, or its being empty. */
export function damageOf(
  fault: ChainFault | undefined,
  byteLength: number,
): JournalDamage | undefined {
  return fault ? journalDamage(fault) : byteLength === 0 ? EMPTY_JOURNAL : undefined;
}

/** The damage of a run whose journal file is gone although the run is recorded. */
export const MISSING_JOURNAL: JournalDamage = {
  kind: "missing",
  line: 0,
  verified_lines: 0,
  words: "its journal file is missing",
};

/**
 * What a user can do about a run whose journal does not verify. `unfinished` names its tasks
 * still to do, `plan` the plan a new run would take (absent: not known).
 */
export function damageFix(unfinished: readonly string[], plan?: string): string {
  const again = `\`service run ${plan ?? "<plan>"}\` starts a new run`;
  const start = unfinished.length > 0
    ? `\`service cancel --all\` gives up its unfinished task(s) (${
      unfinished.slice(0, 6).join(", ")
    }${unfinished.length > 6 ? ", …" : ""}), then ${again}`
    : again;
  return "it cannot be resumed (every append to it is refused; journals are never repaired " +
    `automatically): keep the file as evidence; ${start} (it runs every step again: those ` +
    "whose work is on your branch already end with no changes); `service doctor` shows the damage";
}

/** What a list of runs says once under the runs whose journal does not verify. */
export const DAMAGE_IN_A_LIST = "such a run cannot be resumed (journals are never repaired " +
  "automatically): keep its file as evidence; `service status` says how to go on from the " +
  "current run, `service doctor` shows the damage";
