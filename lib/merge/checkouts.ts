/** Which worktrees of a repository have a branch checked out, and at which commit. */
import { splitZ } from "../git/git.ts";
import { listWorktrees } from "../git/worktree_admin.ts";

/** A checkout of a branch: its directory and the commit its HEAD was at. */
export interface Checkout {
  dir: string;
  head: string;
}

/** Worktrees (main checkout first) that have `refs/heads/<branch>` checked out. */
export async function checkoutsOf(
  root: string,
  branch: string,
  signal?: AbortSignal,
): Promise<Checkout[]> {
  const out = await listWorktrees(root, ["--porcelain", "-z"], { signal });
  const found: Checkout[] = [];
  let dir = "";
  let head = "";
  for (const field of splitZ(out.stdout)) {
    if (field.startsWith("worktree ")) [dir, head] = [field.slice("worktree ".length), ""];
    else if (field.startsWith("HEAD ")) head = field.slice("HEAD ".length);
    else if (field === `branch refs/heads/${branch}`) found.push({ dir, head });
  }
  return found;
}
