/**
 * The diff under review (spec §2.4): the bytes at `.sdd/runs/<run>/review/diffs/<task>.diff`,
 * re-hashed against the `task_diff_captured` row chained in the journal.
 */
import { projectJournal } from "../board/projection.ts";
import { latestDiff } from "../board/fold.ts";
import { parseUnifiedDiff, summarizeDiff } from "../diff/parse.ts";
import { NotFoundError } from "../errors.ts";
import { sha256Hex } from "../journal/hash.ts";
import { diffPath, type WorkspacePaths } from "../workspace.ts";
import type { DiffResponse } from "./types.ts";

/** Whose diff {@link readReviewedDiff} reads. */
export interface ReviewedDiffOf {
  runId: string;
  taskId: string;
  /** The run's journal (its path). */
  journal: string;
}

/** Read, re-hash and summarise the stored diff of a task; 404 when none was captured or it is gone. */
export async function readReviewedDiff(
  paths: WorkspacePaths,
  { runId, taskId, journal }: ReviewedDiffOf,
): Promise<DiffResponse> {
  const projection = await projectJournal(runId, journal);
  const captured = latestDiff(projection.state, taskId);
  if (!captured) {
    throw new NotFoundError(
      "no_diff_captured",
      `no diff captured for task ${taskId} in run ${runId}`,
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(diffPath(paths, runId, taskId));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new NotFoundError(
      "diff_file_missing",
      `the journal chains diff ${captured.sha256} for task ${taskId}, but review/diffs/${taskId}.diff is gone`,
    );
  }
  const actual = "sha256:" + sha256Hex(bytes);
  const text = new TextDecoder().decode(bytes);
  const summary = summarizeDiff(parseUnifiedDiff(text));
  return {
    sha256: captured.sha256,
    verified: actual === captured.sha256 && projection.receipt.journal_verified,
    added: summary.added,
    removed: summary.removed,
    files: summary.files,
    diff_text: text,
  };
}
