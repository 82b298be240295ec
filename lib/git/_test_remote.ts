/** Test helper: a work repository with a bare `origin` holding its `main`, removed on dispose. */
import { git } from "./git.ts";

/** The work repository, its bare remote and the commit both have on `main`. */
export interface TestRemote extends AsyncDisposable {
  bare: string;
  work: string;
  tip: string;
  /** Commit a new file in the work repository; the new commit. */
  commit(name: string): Promise<string>;
}

/** A fresh work repository whose `origin` (a bare repository) has its `main`. */
export async function repoWithRemote(): Promise<TestRemote> {
  const bare = await Deno.makeTempDir({ prefix: "svc-remote-" });
  const work = await Deno.makeTempDir({ prefix: "svc-work-" });
  await git(["init", "-q", "--bare", "-b", "main"], { cwd: bare });
  await git(["init", "-q", "-b", "main"], { cwd: work });
  for (const [k, v] of [["user.email", "t@l"], ["user.name", "t"], ["commit.gpgsign", "false"]]) {
    await git(["config", k, v], { cwd: work });
  }
  const commit = async (name: string) => {
    await Deno.writeTextFile(`${work}/${name}`, `${name}\n`);
    await git(["add", "-A"], { cwd: work });
    await git(["commit", "-q", "-m", name], { cwd: work });
    return (await git(["rev-parse", "HEAD"], { cwd: work })).stdout.trim();
  };
  const tip = await commit("a.txt");
  await git(["remote", "add", "origin", bare], { cwd: work });
  await git(["push", "-q", "origin", "main"], { cwd: work });
  return {
    bare,
    work,
    tip,
    commit,
    async [Symbol.asyncDispose]() {
      await Deno.remove(bare, { recursive: true });
      await Deno.remove(work, { recursive: true });
    },
  };
}
