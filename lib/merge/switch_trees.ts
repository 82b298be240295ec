/**
 * The two-tree switch of a checkout (`git read-tree -m -u <from> <to>`, as `git checkout` does
 * it: merge_in.ts, interrupted.ts). `read-tree` judges a file "not uptodate" by the stat data
 * the index holds, without looking at its content: a file rewritten with the same bytes (an
 * editor's save, a build tool's touch) makes it refuse although nothing would be lost. `git
 * status` sees the same bytes, but the service's git calls do not write the refreshed index
 * (`GIT_OPTIONAL_LOCKS=0`). So a refusal for that reason refreshes the index's stat data
 * (`update-index --refresh`: content already staged is not touched) and switches once more; a
 * file whose bytes did change is refused again, and the switch changes nothing.
 */
import { git, type GitOptions, type GitResult } from "../git/git.ts";

/** `read-tree -m -u from to` in `options.cwd`, once more after a refresh when stat data alone was stale. */
export async function switchTrees(
  from: string,
  to: string,
  options: Omit<GitOptions, "allowFailure">,
): Promise<GitResult> {
  const args = ["read-tree", "-m", "-u", from, to];
  const first = await git(args, { ...options, allowFailure: true });
  if (first.code === 0 || !/not uptodate/.test(first.stderr)) return first;
  await git(["update-index", "-q", "--refresh"], { ...options, allowFailure: true });
  return await git(args, { ...options, allowFailure: true });
}
