/**
 * A merge into the user's checkout that a killed process left half done. merge_in.ts records the
 * merge's intent (checkout_intent.ts) before it touches the checkout, so what is left can be
 * proven to be the service's own — and nothing that is not is ever touched:
 * - the branch is at the merge commit: the merge was whole (the checkout is updated before the
 *   branch moves); the record is cleared;
 * - the branch, or its checkout, moved on since (the user committed, reset or switched branch):
 *   the record no longer describes the checkout; it is cleared, nothing is touched;
 * - every recorded path holds, in index and working tree alike, exactly its entry before the
 *   merge or exactly its entry after it: the paths that hold the merge are put back with the
 *   reverse switch (`git read-tree -m -u <merge> <old>`, which refuses as a whole if it would lose
 *   anything) and the record is cleared; the landing then starts over;
 * - any recorded path holds anything else (changed since, or a conflict): it is the user's. It
 *   is left as it is, the record is kept, and merges wait, naming those paths, until the user
 *   commits or stashes them.
 */
import { join } from "node:path";
import { git } from "../git/git.ts";
import { switchTrees } from "./switch_trees.ts";
import { hardenedConfig } from "../git/agent_tree.ts";
import { processAlive } from "../util/process_alive.ts";
import { type Checkout, checkoutsOf } from "./checkouts.ts";
import {
  type CheckoutIntent,
  clearIntent,
  type Entry,
  readIntent,
  sameEntry,
} from "./checkout_intent.ts";

/** What index and working tree hold at one recorded path now. */
export interface Observed {
  /** Its index entry (stage 0), or `conflict` when it has unmerged stages. */
  index: Entry | "conflict";
  /** The working tree holds exactly the index entry (absent when the index has none). */
  worktreeMatchesIndex: boolean;
}

/** Everything that decides what becomes of a recorded intent. */
export interface InterruptedFacts {
  intent: CheckoutIntent;
  /** This process. */
  pid: number;
  /** The process that recorded the intent still runs. */
  writerAlive: boolean;
  /** The branch's tip now; undefined when the branch is gone. */
  tip?: string;
  /** The worktrees that have the branch checked out. */
  checkouts: readonly Checkout[];
  /** By recorded path, what the checkout holds (asked for with `needs_observed`). */
  observed?: ReadonlyMap<string, Observed>;
}

/** What to do with a recorded intent. */
export type InterruptedVerdict =
  /** Another live process is merging: leave it be. */
  | { kind: "busy"; reason: string }
  /** The merge completed: clear the record. */
  | { kind: "complete" }
  /** The record no longer describes the checkout: clear it, touch nothing. */
  | { kind: "moved_on"; reason: string }
  /** Read the checkout's recorded paths in `dir`, then decide again. */
  | { kind: "needs_observed"; dir: string }
  /** The service's own: put `paths` back as they were before the merge (none: untouched). */
  | { kind: "undo"; dir: string; paths: string[] }
  /** `files` are not exactly the service's: leave everything, keep the record. */
  | { kind: "held"; files: string[]; reason: string };

const short = (oid: string | undefined) => oid ? oid.slice(0, 10) : "gone";

/** Decide what becomes of an interrupted merge's record (pure). */
export function decideInterrupted(f: InterruptedFacts): InterruptedVerdict {
  const i = f.intent;
  if (i.pid !== f.pid && f.writerAlive) {
    return {
      kind: "busy",
      reason: `process ${i.pid} is merging into ${i.target} (when no service runs there, that ` +
        "pid is another program's now: look at `git status`, then remove " +
        ".sdd/runtime/checkout-merge.json)",
    };
  }
  if (f.tip === i.new_tip) return { kind: "complete" };
  if (f.tip !== i.old_tip) {
    return {
      kind: "moved_on",
      reason: `${i.target} is at ${short(f.tip)} now, not at ${short(i.old_tip)} where it started`,
    };
  }
  if (!f.checkouts.some((c) => c.dir === i.checkout)) {
    return { kind: "moved_on", reason: `${i.checkout} no longer has ${i.target} checked out` };
  }
  if (!f.observed) return { kind: "needs_observed", dir: i.checkout };
  const changed: string[] = [];
  const merged: string[] = [];
  for (const p of i.paths) {
    const o = f.observed.get(p.path);
    const entry = o && o.index !== "conflict" && o.worktreeMatchesIndex ? o.index : "other";
    if (entry !== "other" && sameEntry(entry, p.old)) continue;
    if (entry !== "other" && sameEntry(entry, p.new)) merged.push(p.path);
    else changed.push(p.path);
  }
  if (changed.length > 0) {
    const them = changed.length === 1 ? "it" : "them";
    return {
      kind: "held",
      files: changed,
      reason: `uncommitted changes in ${changed.join(", ")} would be overwritten: an ` +
        `interrupted merge of the service had staged its work there, and ${them} changed ` +
        `since, so the service leaves ${them} as ${them === "it" ? "it is" : "they are"}; ` +
        `commit or stash ${them}`,
    };
  }
  return { kind: "undo", dir: i.checkout, paths: merged };
}

/** How an interrupted merge was settled. */
export type Settlement =
  /** No merge was interrupted. */
  | { kind: "none" }
  /** The record is cleared; `note` says what was found and done (one line for the terminal). */
  | { kind: "settled"; note: string }
  /** The checkout is left as it is and merges wait: `reason` names the files. */
  | { kind: "held"; reason: string; files: string[] };

const CHUNK = 500;
const LITERAL = { GIT_LITERAL_PATHSPECS: "1" };

/** What index and working tree of `dir` hold at `paths`. */
async function observe(
  dir: string,
  paths: readonly string[],
  signal?: AbortSignal,
): Promise<Map<string, Observed>> {
  const index = new Map<string, Entry | "conflict">();
  const differs = new Set<string>();
  // As merge_in.ts read and wrote the checkout: no filter or merge driver its attributes pick.
  const config = () => hardenedConfig(dir, { signal }); // listed right before each call
  for (let i = 0; i < paths.length; i += CHUNK) {
    const chunk = paths.slice(i, i + CHUNK);
    const staged = await git(["ls-files", "-s", "-z", "--", ...chunk], {
      cwd: dir,
      signal,
      env: LITERAL,
      config,
    });
    for (const line of staged.stdout.split("\0")) {
      const tab = line.indexOf("\t");
      if (tab < 0) continue;
      const [mode, oid, stage] = line.slice(0, tab).split(" ");
      const path = line.slice(tab + 1);
      index.set(path, stage === "0" && !index.has(path) ? { mode, oid } : "conflict");
    }
    // Working tree against index, each stat-dirty file compared by content (as `git status`).
    const unstaged = await git(["diff", "--name-only", "-z", "--no-renames", "--", ...chunk], {
      cwd: dir,
      signal,
      env: LITERAL,
      config,
    });
    for (const path of unstaged.stdout.split("\0")) if (path) differs.add(path);
  }
  const observed = new Map<string, Observed>();
  for (const path of paths) {
    const entry = index.get(path) ?? null;
    // Not in the index: the working tree matches only while nothing is there either.
    const present = entry === null &&
      await Deno.lstat(join(dir, path)).then(() => true, () => false);
    observed.set(path, { index: entry, worktreeMatchesIndex: !differs.has(path) && !present });
  }
  return observed;
}

/** How the terminal names an interrupted merge: its branch and its reflog message (the tasks). */
function which(i: CheckoutIntent): string {
  return `an interrupted merge into ${i.target} (${i.message})`;
}

/**
 * Settle the merge a killed process left in `root`'s checkout, if it left one (see the header):
 * cleared when complete or moved on, undone when the checkout holds exactly its own entries,
 * held — nothing touched — otherwise.
 */
export async function settleInterruptedMerge(
  root: string,
  options: { signal?: AbortSignal } = {},
): Promise<Settlement> {
  const { intent, problem } = await readIntent(root);
  if (problem) {
    return {
      kind: "held",
      files: [],
      reason: `${problem}: merges into the checkout wait until it is removed (look at ` +
        "`git status` first: an interrupted merge may have staged work there)",
    };
  }
  if (!intent) return { kind: "none" };
  const signal = options.signal;
  const tip = await git(["rev-parse", "--verify", "--quiet", `refs/heads/${intent.target}`], {
    cwd: root,
    signal,
    allowFailure: true,
  });
  const facts: InterruptedFacts = {
    intent,
    pid: Deno.pid,
    writerAlive: processAlive(intent.pid),
    tip: tip.code === 0 ? tip.stdout.trim() : undefined,
    checkouts: await checkoutsOf(root, intent.target, signal),
  };
  let verdict = decideInterrupted(facts);
  if (verdict.kind === "needs_observed") {
    facts.observed = await observe(verdict.dir, intent.paths.map((p) => p.path), signal);
    verdict = decideInterrupted(facts);
  }
  switch (verdict.kind) {
    case "busy":
      return { kind: "held", reason: verdict.reason, files: [] };
    case "held":
      return { kind: "held", reason: verdict.reason, files: verdict.files };
    case "needs_observed":
      throw new Error("decideInterrupted() asked twice for the checkout's paths");
    case "complete":
      await clearIntent(root);
      return {
        kind: "settled",
        note: `${which(intent)} had completed: ${intent.target} is at its merge commit ` +
          `${short(intent.new_tip)}`,
      };
    case "moved_on":
      await clearIntent(root);
      return {
        kind: "settled",
        note: `${which(intent)} is left as it is: ${verdict.reason}; nothing was touched`,
      };
    case "undo": {
      if (verdict.paths.length > 0) {
        const undo = await switchTrees(intent.new_tip, intent.old_tip, {
          cwd: verdict.dir,
          signal,
          config: () => hardenedConfig(verdict.dir, { signal }),
        });
        if (undo.code !== 0) {
          return {
            kind: "held",
            files: verdict.paths,
            reason: `${which(intent)} staged ${verdict.paths.join(", ")} and cannot be undone: ` +
              `${undo.stderr.trim()}; merges into ${intent.target} wait`,
          };
        }
      }
      await clearIntent(root);
      return {
        kind: "settled",
        note: verdict.paths.length > 0
          ? `undid ${which(intent)}: ${verdict.paths.join(", ")} ${
            verdict.paths.length === 1 ? "is" : "are"
          } back as before it (exactly what it had staged); the work lands again`
          : `${which(intent)} had not touched the checkout yet; nothing to undo`,
      };
    }
  }
}
