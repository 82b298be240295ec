/**
 * A train's merges chained in one process (train.ts, step 1). Each member merges onto the merge
 * commit the member before it made, so the chain is a sequence: `merge-tree`, `commit-tree`,
 * `merge-tree`, … Started one git process at a time from the service, each step waits for the
 * service's event loop to notice the exit before the next can start: 20–35 ms a step while
 * sixteen agents run, for git's own 1–4 ms (docs/performance.md, "Ninth round"). Here a constant
 * `sh` script runs the steps back to back and prints each merge's tree and commit.
 *
 * The script does only the plain case — a clean merge that changes the tree — and stops at the
 * first step that is anything else (a conflict, a merge that changes nothing, any failure): the
 * train takes that member one step at a time as before, so every other outcome is still decided,
 * and worded, in one place (merge_tree.ts `mergeOnto`).
 */
import { gitScript } from "../git/git.ts";
import type { CommitTree } from "./merge_tree.ts";

/** One member of a chain: the commit to merge, and the message of its merge commit. */
export interface ChainLink {
  agent: string;
  message: string;
}

/**
 * `$1`, `$2`: the commit and tree the chain starts on; then a commit to merge and its merge
 * commit's message, per member. Prints `<tree> <commit>` per merge commit made.
 */
const CHAIN_SCRIPT = `parent=$1 ptree=$2
shift 2
while [ $# -ge 2 ]; do
  tree=$(git merge-tree --write-tree --name-only --no-messages "$parent" "$1") || exit 0
  case $tree in *[!0-9a-f]*|"") exit 0 ;; esac
  [ "$tree" = "$ptree" ] && exit 0
  commit=$(git commit-tree "$tree" -p "$parent" -p "$1" -m "$2") || exit 0
  printf '%s %s\\n' "$tree" "$commit"
  parent=$commit ptree=$tree
  shift 2
done
`;

const OID = /^[0-9a-f]{40,64}$/;

/** Options of {@link chainMerges}. */
export interface ChainOptions {
  /** The committer's identity variables (git.ts `commitIdentity`). */
  env: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * Merge `links` one onto the other from `onto`, in one process: the merge commits made, in
 * order, for as many leading links as merged cleanly and changed the tree (none where there is no
 * POSIX shell). The rest are the caller's, one step at a time.
 */
export async function chainMerges(
  root: string,
  onto: CommitTree,
  links: readonly ChainLink[],
  options: ChainOptions,
): Promise<CommitTree[]> {
  if (links.length < 2 || Deno.build.os === "windows") return [];
  const args = [onto.commit, onto.tree, ...links.flatMap((l) => [l.agent, l.message])];
  let stdout: string;
  try {
    ({ stdout } = await gitScript("merge chain", CHAIN_SCRIPT, args, {
      cwd: root,
      env: options.env,
      signal: options.signal,
      allowFailure: true,
    }));
  } catch {
    return []; // not started, timed out or aborted: the steps tell what, one at a time
  }
  return parseChain(stdout, links.length);
}

/** The merge commits a chain's output names, up to the first line that is not one. Pure. */
export function parseChain(stdout: string, most: number): CommitTree[] {
  const made: CommitTree[] = [];
  for (const line of stdout.split("\n")) {
    const [tree, commit, extra] = line.split(" ");
    if (made.length === most || extra !== undefined || !OID.test(tree) || !OID.test(commit ?? "")) {
      break;
    }
    made.push({ tree, commit });
  }
  return made;
}
