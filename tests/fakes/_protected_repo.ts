/**
 * The git side of the fake code hosts (github_api.ts, gitlab_api.ts): a real bare repository
 * whose `pre-receive` hook refuses every push to the protected base branch (as a host's branch
 * protection does) and logs the pushes it accepts. Only {@link ProtectedRepo.merge} — the host's
 * own merge, through `update-ref`, which runs no hook — moves the base.
 */
import { join } from "node:path";

/** The bare repository and what the fake host does with it. */
export interface ProtectedRepo {
  bare: string;
  base: string;
  /** The tip of `branch`, or undefined. */
  tip(branch: string): Promise<string | undefined>;
  /** The commit `rev` names, or "". */
  resolve(rev: string): Promise<string>;
  /** Files `sha` changes against the base's tip. */
  changedFiles(sha: string): Promise<string[]>;
  /** False when merging `sha` into the base conflicts. */
  mergesCleanly(sha: string): Promise<boolean>;
  /** True when `sha` holds the base's tip (a pull request that is up to date with its base). */
  upToDate(sha: string): Promise<boolean>;
  /** True when `sha` has a commit the base does not (else the hosts open no pull request). */
  hasCommits(sha: string): Promise<boolean>;
  /**
   * Merge `sha` into the base as the host does (`merge`: a merge commit; `squash`/`rebase`: one
   * commit on the base's tip; `ff`: the base moves to `sha`, which must hold it), guarded on the
   * base not moving; the new tip, or undefined on a conflict or a moved base.
   */
  merge(sha: string, method: string, message: string): Promise<string | undefined>;
  /** Delete `branch` (never the base); false when it does not exist. */
  deleteBranch(branch: string): Promise<boolean>;
  /** Accepted pushes, as `old new ref`. */
  pushes(): Promise<string[]>;
  /** Refs of refused pushes (to the base). */
  refusedPushes(): Promise<string[]>;
  remove(): Promise<void>;
}

async function git(cwd: string, ...args: string[]): Promise<{ ok: boolean; out: string }> {
  const r = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder();
  return { ok: r.success, out: r.success ? text.decode(r.stdout).trim() : text.decode(r.stderr) };
}

async function mustGit(cwd: string, ...args: string[]): Promise<string> {
  const r = await git(cwd, ...args);
  if (!r.ok) throw new Error(`git ${args.join(" ")}: ${r.out}`);
  return r.out;
}

async function lines(path: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(path)).split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/** A new bare repository holding `seed`'s HEAD as `base`, which no push may move. */
export async function protectedRepo(
  seed: string,
  base: string,
  prefix: string,
): Promise<ProtectedRepo> {
  const bare = await Deno.makeTempDir({ prefix });
  await mustGit(bare, "init", "-q", "--bare", "-b", base);
  await mustGit(seed, "push", "-q", bare, `HEAD:refs/heads/${base}`);
  const refusedLog = join(bare, "refused.log");
  const pushLog = join(bare, "pushes.log");
  const hook = join(bare, "hooks", "pre-receive");
  await Deno.writeTextFile(
    hook,
    `#!/bin/sh
# Branch protection: nobody pushes to ${base}; it moves only by merging a pull request.
status=0
while read old new ref; do
  if [ "$ref" = "refs/heads/${base}" ]; then
    echo "$ref" >> "${refusedLog}"
    echo "error: protected branch update failed for $ref." >&2
    status=1
  else
    echo "$old $new $ref" >> "${pushLog}"
  fi
done
exit $status
`,
  );
  await Deno.chmod(hook, 0o755);

  const tip = async (branch: string) => {
    const r = await git(bare, "rev-parse", "--verify", "-q", `refs/heads/${branch}^{commit}`);
    return r.ok ? r.out : undefined;
  };
  const mergeTree = async (sha: string) => {
    const r = await git(bare, "merge-tree", "--write-tree", (await tip(base))!, sha);
    return r.ok ? r.out.split("\n")[0] : undefined;
  };
  return {
    bare,
    base,
    tip,
    async resolve(rev) {
      const r = await git(bare, "rev-parse", "--verify", "-q", `${rev}^{commit}`);
      return r.ok ? r.out : "";
    },
    async changedFiles(sha) {
      return (await mustGit(bare, "diff", "--name-only", (await tip(base))!, sha)).split("\n")
        .filter(Boolean);
    },
    async mergesCleanly(sha) {
      return (await mergeTree(sha)) !== undefined;
    },
    async upToDate(sha) {
      return (await git(bare, "merge-base", "--is-ancestor", (await tip(base))!, sha)).ok;
    },
    async hasCommits(sha) {
      return !(await git(bare, "merge-base", "--is-ancestor", sha, (await tip(base))!)).ok;
    },
    async merge(sha, method, message) {
      const baseTip = (await tip(base))!;
      if (method === "ff") {
        const ahead = (await git(bare, "merge-base", "--is-ancestor", baseTip, sha)).ok;
        if (!ahead) return undefined;
        const moved = await git(bare, "update-ref", `refs/heads/${base}`, sha, baseTip);
        return moved.ok ? sha : undefined;
      }
      const tree = await mergeTree(sha);
      if (!tree) return undefined;
      const parents = method === "merge" ? ["-p", baseTip, "-p", sha] : ["-p", baseTip];
      const commit = await mustGit(
        bare,
        "-c",
        "user.name=Host",
        "-c",
        "user.email=noreply@host.example",
        "commit-tree",
        tree,
        ...parents,
        "-m",
        message,
      );
      const moved = await git(bare, "update-ref", `refs/heads/${base}`, commit, baseTip);
      return moved.ok ? commit : undefined;
    },
    async deleteBranch(branch) {
      if (branch === base) return false;
      return (await git(bare, "update-ref", "-d", `refs/heads/${branch}`)).ok;
    },
    pushes: () => lines(pushLog),
    refusedPushes: () => lines(refusedLog),
    remove: () => Deno.remove(bare, { recursive: true }).catch(() => {}),
  };
}
