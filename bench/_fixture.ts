/** Benchmark fixture: a repository of ~200 files, and the two measured operations. */
import { dirname, join } from "node:path";
import { git, gitText } from "../lib/git/git.ts";
import { mergeAgentBranch } from "../lib/merge/merge.ts";
import { createWorktree } from "../lib/worktrees/worktrees.ts";

/** Create a repository with `files` small files committed on `main`; returns its root. */
export async function benchRepo(files = 200): Promise<string> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "svc-bench-" }));
  await git(["init", "-q", "-b", "main"], { cwd: root });
  await git(["config", "user.name", "bench"], { cwd: root });
  await git(["config", "user.email", "bench@example.com"], { cwd: root });
  for (let i = 0; i < files; i++) {
    const path = join(root, `src/m${i % 10}/file_${i}.ts`);
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.writeTextFile(path, `export const v${i} = ${i};\n`.repeat(40));
  }
  await git(["add", "-A"], { cwd: root });
  await git(["commit", "-qm", "init"], { cwd: root });
  return root;
}

/** Spawn overhead of one agent: its worktree plus starting a trivial process there. */
export async function spawnOnce(root: string, session: string, base: string): Promise<void> {
  const wt = await createWorktree(root, session, base);
  const status = await new Deno.Command("true", { cwd: wt.path, stdout: "null", stderr: "null" })
    .spawn().status;
  if (!status.success) throw new Error("true failed");
}

/** Prepare an agent branch with one new file on top of `main` (not measured). */
export async function prepareAgent(root: string, session: string): Promise<void> {
  const tip = await gitText(["rev-parse", "main"], { cwd: root });
  const wt = await createWorktree(root, session, tip);
  await Deno.writeTextFile(join(wt.path, `src/new_${session}.ts`), "export {};\n");
  await git(["add", "-A"], { cwd: wt.path });
  await git(["commit", "-qm", "w"], { cwd: wt.path });
}

/** Gate-less land of `agent/<session>` onto the checked-out `main`. */
export async function landOnce(root: string, session: string): Promise<void> {
  const out = await mergeAgentBranch(root, {
    target: "main",
    agent: `agent/${session}`,
    taskId: session,
  });
  if (out.status !== "merged") throw new Error(JSON.stringify(out));
}
