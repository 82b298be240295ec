/**
 * What the core makes of a captured diff's judgement (DESIGN.md §18): paths outside the task's
 * `owned_files` are flagged (`task_owned_files_exceeded`) or, under `enforce_owned_files`,
 * refused as a failed attempt whose next prompt says which; protected paths are journaled
 * (`task_protected_paths`) and hold the work for an operator's merge — as does a diff whose
 * paths could not be read.
 */
import * as ev from "../../journal/events.ts";
import type { DiffJudgement } from "./protocol.ts";
import { attemptFailed, type Out } from "./outcomes.ts";
import type { Draft, TaskView } from "./state.ts";
import { printable } from "../../util/printable.ts";
import type { OversizedFile } from "../../protect/file_sizes.ts";
import { sizeText } from "../../util/size_words.ts";

/**
 * Paths in a line of text: the first few, then how many more. A file name is the agent's
 * choice: each is made printable (no escape sequence reaches a terminal).
 */
function pathList(paths: readonly string[], shown = 8): string {
  const head = paths.slice(0, shown).map(printable).join(", ");
  return paths.length > shown ? `${head} and ${paths.length - shown} more` : head;
}

/** Files with their sizes in a line of text (as {@link pathList}). */
function sizedList(files: readonly { path: string; bytes: number }[], shown = 8): string {
  const head = files.slice(0, shown).map((f) => `${printable(f.path)} (${sizeText(f.bytes)})`);
  const more = files.length > shown ? ` and ${files.length - shown} more` : "";
  return head.join(", ") + more;
}

/** What holds a diff for an operator: its protected paths, its files over the size limit. */
export type HeldBy = Pick<DiffJudgement, "protected" | "error" | "oversized" | "limitBytes">;

/**
 * Why work whose diff touches protected paths, or adds files over `max_landed_file_mb`, waits (in
 * `status`, the log and the journal), naming the setting that holds it.
 */
export function protectedWait(j: HeldBy): string {
  const what: string[] = [];
  const settings: string[] = [];
  if (j.error || j.protected.length > 0 || !j.oversized?.length) {
    what.push(
      j.error ??
        `it changes protected path${j.protected.length === 1 ? "" : "s"} ${pathList(j.protected)}`,
    );
    settings.push("protected_paths");
  }
  if (j.oversized?.length) {
    const limit = j.limitBytes === undefined ? "" : ` (${sizeText(j.limitBytes)})`;
    what.push(
      `it adds or grows ${j.oversized.length === 1 ? "a file" : "files"} over ` +
        `max_landed_file_mb${limit}: ${sizedList(j.oversized)}`,
    );
    settings.push("max_landed_file_mb");
  }
  return `${what.join("; ")}: waiting for an operator's merge decision on the board ` +
    `(${settings.join(", ")})`;
}

/** Whether a judgement holds the work for an operator (DESIGN.md §18). */
export function holdsForReview(j: HeldBy): boolean {
  return j.protected.length > 0 || j.error !== undefined || (j.oversized?.length ?? 0) > 0;
}

/** The most files a `task_oversized_files` row names (`files_total` counts them all). */
const MAX_FILES_NAMED = 200;

/** The outcome of {@link judgeCaptured}. */
export type Judged =
  /** `enforce_owned_files` refuses it ({@link refuseOutsideOwned} records the failure). */
  | { kind: "refused"; paths: string[] }
  /**
   * It waits for an operator: the protected paths (none when they could not be read) and the
   * files over `max_landed_file_mb`.
   */
  | { kind: "guarded"; paths: string[]; oversized: OversizedFile[]; reason: string }
  | { kind: "clear" };

/** Record what `j` says of `task`'s diff and decide whether its work may go on unattended. */
export function judgeCaptured(
  d: Draft,
  out: Out,
  task: TaskView,
  j: DiffJudgement | undefined,
): Judged {
  if (!j) return { kind: "clear" };
  if (j.outsideOwned.length > 0) {
    const enforced = d.settings.enforceOwnedFiles === true;
    out.journal(ev.taskOwnedFilesExceeded({
      task_id: task.id,
      paths: j.outsideOwned,
      owned_files: task.owned_files,
      enforced,
    }));
    if (enforced) return { kind: "refused", paths: j.outsideOwned };
    out.log(
      task.id,
      `its diff changes ${pathList(j.outsideOwned)} outside its owned_files ` +
        `(${pathList(task.owned_files)}); flagged (enforce_owned_files: true refuses it)`,
    );
  }
  if (!holdsForReview(j)) return { kind: "clear" };
  if (j.protected.length > 0 || j.error) {
    out.journal(ev.taskProtectedPaths({ task_id: task.id, paths: j.protected, error: j.error }));
  }
  const oversized = j.oversized ?? [];
  if (oversized.length > 0) {
    out.journal(ev.taskOversizedFiles({
      task_id: task.id,
      files: oversized.slice(0, MAX_FILES_NAMED),
      ...(oversized.length > MAX_FILES_NAMED ? { files_total: oversized.length } : {}),
      limit_bytes: j.limitBytes ?? 0,
    }));
  }
  return { kind: "guarded", paths: j.protected, oversized, reason: protectedWait(j) };
}

/** The attempt whose diff left its owned_files is refused: a failed attempt, told which. */
export function refuseOutsideOwned(d: Draft, out: Out, task: TaskView, paths: string[]): void {
  const owned = pathList(task.owned_files);
  d.landings.delete(task.id);
  out.push({ kind: "reap", taskId: task.id, reason: "its diff left its owned_files" });
  attemptFailed(d, out, task, {
    signals: [{
      kind: "owned_files_exceeded",
      detail: `changes ${pathList(paths)} outside owned_files (${owned}); enforce_owned_files ` +
        "refuses it",
    }],
    reason: `refused: its diff changes ${pathList(paths)} outside its owned_files (${owned}) ` +
      "and enforce_owned_files is on",
    note: `your diff changed ${pathList(paths, 50)}, outside the files you own (${owned}), and ` +
      "such a diff is refused. Change only the files you own and leave every other file as it is.",
    retryable: true,
  });
}
