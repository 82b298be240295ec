/** Benchmark fixture: a repository of ~200 files, and the two measured operations. */
import { dirname, join } from "node:path";
import { git, gitText } from "../lib/git/git.ts";
import { mergeAgentBranch } from "../lib/merge/merge.ts";
import { createWorktree } from "../lib/worktrees/worktrees.ts";

/** A fresh git repository in a temporary directory with `files` (path → text) committed on `main`. */
export async function committedRepo(
  prefix: string,
  files: Record<string, string>,
): Promise<string> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  await git(["init", "-q", "-b", "main"], { cwd: root });
  await git(["config", "user.name", "bench"], { cwd: root });
  await git(["config", "user.email", "bench@example.com"], { cwd: root });
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, path)), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
  await git(["add", "-A"], { cwd: root });
  await git(["commit", "-qm", "init"], { cwd: root });
  return root;
}

/** Create a repository with `files` small files committed on `main`; returns its root. */
export function benchRepo(files = 200): Promise<string> {
  return committedRepo(
    "svc-bench-",
    Object.fromEntries(Array.from({ length: files }, (_, i) => [
      `src/m${i % 10}/file_${i}.ts`,
      `export const v${i} = ${i};\n`.repeat(40),
    ])),
  );
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
