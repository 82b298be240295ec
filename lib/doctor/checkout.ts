/**
 * `service doctor`'s checkout check: the branch `service run` would land on, by the very check
 * run makes (a branch with a commit, not a detached HEAD: lib/runner/run_checks.ts), and the
 * uncommitted changes beside it — agents start from the last commit and do not see them, and a
 * merge that touches one waits until it is committed or stashed.
 */
import type { CheckResult } from "../check_result.ts";
import { git, splitZ } from "../git/git.ts";
import { currentBranch } from "../runner/run_checks.ts";

/** Changed paths named in a warning; the rest are counted. */
const NAMED = 3;

/** The paths of `git status --porcelain -z` output (a rename's source is skipped). Pure. */
export function changedPaths(porcelainZ: string): string[] {
  const fields = splitZ(porcelainZ);
  const out: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    out.push(fields[i].slice(3));
    if (/^[RC]/.test(fields[i])) i++; // `R  new\0old`: the old name follows
  }
  return out;
}

/**
 * The branch run would land on, or what stops run there; a warning for uncommitted changes.
 * Nothing when `root` is not a git repository (the workspace check says so).
 */
export async function checkCheckout(root: string): Promise<CheckResult[]> {
  let branch: string;
  try {
    branch = await currentBranch(root);
  } catch (e) {
    const err = e as Error & { fix?: string };
    if (/is not a git repository/.test(err.message)) return [];
    return [{ name: "checkout", ok: false, detail: err.message, fix: err.fix }];
  }
  const tip = await git(["rev-parse", "--short", "HEAD"], { cwd: root });
  const status = await git(["status", "--porcelain", "-z", "--untracked-files=normal"], {
    cwd: root,
    allowFailure: true,
  });
  const changed = status.code === 0 ? changedPaths(status.stdout) : [];
  const at = `branch ${branch} at ${tip.stdout.trim()}`;
  if (changed.length === 0) return [{ name: "checkout", ok: true, detail: `${at}, clean` }];
  const named = changed.slice(0, NAMED).join(", ") +
    (changed.length > NAMED ? `, and ${changed.length - NAMED} more` : "");
  return [{
    name: "checkout",
    ok: true,
    warning: true,
    detail: `${at}, ${changed.length} uncommitted change(s) (${named}): agents start from the ` +
      "last commit and do not see them, and a merge that touches one waits",
    fix: "commit what the agents should build on (`git add -A && git commit`), or stash it",
  }];
}
