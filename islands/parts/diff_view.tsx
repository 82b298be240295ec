/**
 * Pieces of the diff viewer (spec §4.1 rule 4): the header with its DIFF UNVERIFIED badge, the
 * "no diff captured" notice, a file's collapsible summary and its numbered, coloured lines.
 */
import type { DiffFile, DiffLine } from "../../lib/diff/parse.ts";
import type { DiffResponse } from "../../lib/review/types.ts";
import { showBidiControls } from "../../lib/dashboard/bidi_controls.ts";

/** Shown when the journal has no `task_diff_captured` row for the task. */
export function NoDiffCaptured() {
  return <p class="muted" data-no-diff>no diff captured</p>;
}

/** Props of {@link DiffHeader}. */
export interface DiffHeaderProps {
  diff: Pick<DiffResponse, "sha256" | "verified" | "added" | "removed" | "files">;
}

/** Hash, totals and the verification badge of a served diff. */
export function DiffHeader({ diff }: DiffHeaderProps) {
  return (
    <p style="margin:0 0 .5rem">
      {diff.verified
        ? <span class="badge ok">diff verified</span>
        : (
          <span class="badge bad" role="status" data-diff-unverified>
            DIFF UNVERIFIED
          </span>
        )} <span class="plus">+{diff.added}</span> <span class="minus">−{diff.removed}</span>,{" "}
      {diff.files.length} {diff.files.length === 1 ? "file" : "files"} ·{" "}
      <span class="hash">{diff.sha256}</span>
      {!diff.verified && (
        <span class="muted">
          {" "}— the stored bytes do not re-hash to the capture chained in the journal, or the
          journal does not verify.
        </span>
      )}
    </p>
  );
}

const STATUS_WORDS: Record<DiffFile["status"], string> = {
  added: "new file",
  deleted: "deleted",
  modified: "",
  renamed: "renamed",
  copied: "copied",
};

/** Props of {@link DiffFileToggle}. */
export interface DiffFileToggleProps {
  file: DiffFile;
  expanded: boolean;
  /** Id of the element the toggle controls. */
  controls: string;
  onToggle?: () => void;
  /** The file is a protected path (DESIGN.md §18): the toggle says so. */
  guarded?: boolean;
}

/** A file's summary line: a button that expands or collapses its hunks. */
export function DiffFileToggle(
  { file, expanded, controls, onToggle, guarded = false }: DiffFileToggleProps,
) {
  const moved = file.oldPath && file.oldPath !== file.path;
  return (
    <button
      type="button"
      class="file-toggle"
      aria-expanded={expanded}
      aria-controls={controls}
      data-path={file.path}
      onClick={onToggle}
    >
      <span class="path">
        {showBidiControls(moved ? `${file.oldPath} → ${file.path}` : file.path)}
      </span>
      {guarded && (
        <span class="badge bad" data-protected title="protected_paths: lands only on a merge">
          protected
        </span>
      )}
      {STATUS_WORDS[file.status] && <span class="muted">{STATUS_WORDS[file.status]}</span>}
      {file.binary ? <span class="muted">binary file</span> : (
        <>
          <span class="plus">+{file.added}</span>
          <span class="minus">−{file.removed}</span>
          <span class="muted">
            {file.hunks.length} {file.hunks.length === 1 ? "hunk" : "hunks"}
          </span>
        </>
      )}
    </button>
  );
}

const SIGN: Record<DiffLine["kind"], string> = { add: "+", del: "-", ctx: " ", meta: "" };

/** Props of {@link DiffLines}. */
export interface DiffLinesProps {
  file: DiffFile;
  /** Render at most this many rows (hunk headers included); the viewer offers the rest. */
  limit?: number;
}

/** Number of rows {@link DiffLines} renders for a whole file. */
export function rowCount(file: DiffFile): number {
  let rows = 0;
  for (const hunk of file.hunks) rows += 1 + hunk.lines.length;
  return rows;
}

const gutter = (n: number | undefined) => (n === undefined ? "" : String(n)).padStart(6);

/**
 * A file's hunks, one block per line: old and new line numbers (a CSS gutter, so they are not
 * copied with the code), sign and text, coloured by kind. Plain blocks, not a table: 5 000
 * lines lay out in a few milliseconds.
 */
export function DiffLines({ file, limit = Infinity }: DiffLinesProps) {
  if (file.binary) return <p class="muted">Binary file: contents not shown.</p>;
  if (file.hunks.length === 0) {
    return <p class="muted">No line changes ({STATUS_WORDS[file.status] || "mode change"}).</p>;
  }
  const rows = [];
  let budget = limit;
  for (const hunk of file.hunks) {
    if (budget-- <= 0) break;
    rows.push(<div class="l hunk">{hunk.header}</div>);
    for (const line of hunk.lines) {
      if (budget-- <= 0) break;
      rows.push(
        <div
          class={`l ${line.kind}`}
          data-old={line.old}
          data-new={line.new}
          data-ln={gutter(line.old) + gutter(line.new)}
        >
          {SIGN[line.kind] + showBidiControls(line.text)}
        </div>,
      );
    }
  }
  return <div class="lines">{rows}</div>;
}
