/**
 * Diff capture at reap time (spec §4.1 rule 5, DESIGN.md §7): stage everything in the worktree,
 * keep out what the ignores match that an agent staged or committed anyway (DESIGN.md §13,
 * ./keep_out.ts: the `task_files_kept_out` row says which, and how many agent commits were
 * rewritten into one), commit it to the agent branch when anything is uncommitted, store
 * `git diff <base> <tip>` at `.sdd/runs/<run>/review/diffs/<task>.diff` and chain a
 * `task_diff_captured` row. Fail-open:
 * any failure returns `{captured: false, reason}`, appends nothing and never throws.
 *
 * The stored text is plain `git diff` (no `--binary`): binary files appear as
 * "Binary files … differ" lines, which the review board can show and count, instead of
 * base85 payloads nobody reviews. The same git process lists the leaves the diff changes
 * (`--raw -z --no-abbrev`, which leave the patch's bytes as they are: lib/diff/raw_listing.ts),
 * for the protected-paths judgement of the same two commits (lib/protect/judge.ts).
 */
import { dirname } from "node:path";
import { parseUnifiedDiff, summarizeDiff } from "../diff/parse.ts";
import { type RawChange, splitRawAndPatch } from "../diff/raw_listing.ts";
import { MAX_SHOWN_PATCH_BYTES, RAW_LISTING_ALLOWANCE, shownPatch } from "../diff/shown_patch.ts";
import { isValidId } from "../ids.ts";
import { taskDiffCaptured, taskFilesKeptOut } from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { sha256Hex } from "../journal/hash.ts";
import { diffPath, workspacePaths } from "../workspace.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { commitPartialWork } from "./worktrees.ts";
import { openWorktree } from "./trees.ts";

/** Input of {@link captureDiff}. */
export interface CaptureDiffOptions {
  /** Workspace root. */
  root: string;
  runId: string;
  taskId: string;
  /** The agent's worktree. */
  worktree: string;
  /** The commit the worktree was cut from. */
  base: string;
  /** The run journal to append `task_diff_captured` to. */
  journalPath: string;
  /** Message of the commit of uncommitted work. */
  message?: string;
  signal?: AbortSignal;
  /** Told what of the worktree's git files had to be put back (lib/worktrees/trees.ts). */
  warn?: (line: string) => void;
  /** The most patch bytes stored for review (lib/diff/shown_patch.ts; tests make it small). */
  maxShownBytes?: number;
}

/** What {@link captureDiff} did. */
export type CaptureDiffResult =
  | {
    captured: true;
    path: string;
    /** `sha256:<hex>` of the stored bytes. */
    sha256: string;
    added: number;
    removed: number;
    files: number;
    tip: string;
    /** Ignored or copied files kept out of its commits. */
    leftOut: string[];
    /** Agent commits rewritten into one because they held such files. */
    rewritten: number;
    /**
     * The leaves `git diff <base> <tip>` changes, as git listed them (lib/diff/raw_listing.ts);
     * absent when the listing alone was larger than the service reads with a patch.
     */
    changes?: RawChange[];
    /** The whole patch's bytes and files, when what is stored was cut (lib/diff/shown_patch.ts). */
    truncated?: { bytes: number; files: number };
  }
  | { captured: false; reason: string };

/** Arguments that pin the diff format regardless of the user's git configuration. */
export const DIFF_ARGS: readonly string[] = [
  "-c",
  "core.quotePath=true",
  "diff",
  "--no-color",
  "--no-ext-diff",
  "--no-textconv",
  "--src-prefix=a/",
  "--dst-prefix=b/",
];

/** Added to {@link DIFF_ARGS}: the raw listing first, then the same patch (see the module's comment). */
export const RAW_THEN_PATCH: readonly string[] = ["--raw", "-z", "--no-abbrev", "-p"];

/**
 * The listing and the patch of `git diff --raw -z --no-abbrev -p`'s first `bytes` (of `total`
 * printed). A listing that does not end within them is not trusted (a listing cut at a record's
 * end would look whole): the judgement then asks git for its own, and nothing of the patch is
 * kept (`records` 0: how many files is not known).
 */
function listingAndPatch(
  bytes: Uint8Array,
  total = bytes.length,
): { changes?: RawChange[]; patch: Uint8Array; records: number } {
  const cut = total > bytes.length;
  try {
    const out = splitRawAndPatch(bytes);
    if (!cut || out.patch.length > 0) return out;
  } catch (e) {
    if (!cut) throw e;
  }
  return { patch: new Uint8Array(), records: 0 };
}

/** Capture the diff of a task's worktree; never throws. */
export async function captureDiff(options: CaptureDiffOptions): Promise<CaptureDiffResult> {
  try {
    if (!isValidId(options.runId) || !isValidId(options.taskId)) {
      return {
        captured: false,
        reason: `invalid run or task id: ${options.runId}/${options.taskId}`,
      };
    }
    const stat = await Deno.stat(options.worktree).catch(() => undefined);
    if (!stat?.isDirectory) {
      return { captured: false, reason: `no worktree at ${options.worktree}` };
    }
    const message = options.message ?? `service: uncommitted work of task ${options.taskId}`;
    // The worktree's git files checked (and put back) once; every call below is hardened.
    const tree = await openWorktree(options.worktree, {
      signal: options.signal,
      warn: options.warn,
    });
    // Build caches and copied or ignored files an agent staged or committed anyway never enter
    // a commit of the branch that lands (lib/worktrees/keep_out.ts), nor the diff.
    const work = await commitPartialWork(options.worktree, message, {
      signal: options.signal,
      root: options.root,
      tree,
      base: options.base,
    });
    const tip = work.tip;
    if (work.leftOut.length > 0) {
      await appendEvents(options.journalPath, [taskFilesKeptOut({
        task_id: options.taskId,
        paths: work.leftOut.slice(0, 200),
        ...(work.leftOut.length > 200 ? { paths_total: work.leftOut.length } : {}),
        rewritten_commits: work.rewritten,
      })]);
    }
    const max = options.maxShownBytes ?? MAX_SHOWN_PATCH_BYTES;
    const diff = await tree.git([...DIFF_ARGS, ...RAW_THEN_PATCH, options.base, tip, "--"], {
      signal: options.signal,
      // Never more than a reviewer reads (and a listing) in memory, however large the patch.
      stdoutKeep: max + RAW_LISTING_ALLOWANCE,
    });
    const { changes, patch, records } = listingAndPatch(diff.bytes, diff.stdoutTotal);
    const rawBytes = diff.bytes.length - patch.length;
    const shown = shownPatch(patch, {
      total: (diff.stdoutTotal ?? diff.bytes.length) - rawBytes,
      files: records,
    }, max);
    const bytes = shown.bytes;
    const summary = summarizeDiff(parseUnifiedDiff(new TextDecoder().decode(bytes)));
    const sha256 = "sha256:" + sha256Hex(bytes);
    const path = diffPath(workspacePaths(options.root), options.runId, options.taskId);
    await Deno.mkdir(dirname(path), { recursive: true });
    await writeFileAtomic(path, bytes);
    const data = {
      task_id: options.taskId,
      sha256,
      added: summary.added,
      removed: summary.removed,
      files: summary.files.length,
      ...(shown.truncated ? { truncated: shown.truncated } : {}),
    };
    await appendEvents(options.journalPath, [taskDiffCaptured(data)]);
    return {
      captured: true,
      path,
      tip,
      ...data,
      leftOut: work.leftOut,
      rewritten: work.rewritten,
      ...(changes ? { changes } : {}),
    };
  } catch (e) {
    return { captured: false, reason: e instanceof Error ? e.message : String(e) };
  }
}
