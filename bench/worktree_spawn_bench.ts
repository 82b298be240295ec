/**
 * Spawn overhead per agent (worktree + process start) and gate-less landing time, in a
 * repository of ~200 files. Run: `deno bench -A bench/worktree_spawn_bench.ts`.
 * Aim: worktree + `true` median <= 150 ms.
 */
import { dirname, join } from "node:path";
import { git, gitText } from "../lib/git/git.ts";
import { createWorktree } from "../lib/worktrees/worktrees.ts";
import { mergeAgentBranch } from "../lib/merge/merge.ts";

const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "svc-bench-" }));
await git(["init", "-q", "-b", "main"], { cwd: root });
await git(["config", "user.name", "bench"], { cwd: root });
await git(["config", "user.email", "bench@example.com"], { cwd: root });
for (let i = 0; i < 200; i++) {
  const path = join(root, `src/m${i % 10}/file_${i}.ts`);
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, `export const v${i} = ${i};\n`.repeat(40));
}
await git(["add", "-A"], { cwd: root });
await git(["commit", "-qm", "init"], { cwd: root });
const base = await gitText(["rev-parse", "main"], { cwd: root });
globalThis.addEventListener("unload", () => Deno.removeSync(root, { recursive: true }));

let n = 0;

Deno.bench("spawn overhead: createWorktree + start `true`", { group: "spawn" }, async (b) => {
  const session = `b${n++}`;
  b.start();
  const wt = await createWorktree(root, session, base);
  const status = await new Deno.Command("true", { cwd: wt.path, stdout: "null", stderr: "null" })
    .spawn().status;
  b.end();
  if (!status.success) throw new Error("true failed");
});

Deno.bench("gate-less land: merge-tree + commit-tree + advance checked-out main", {
  group: "merge",
}, async (b) => {
  const session = `m${n++}`;
  const tip = await gitText(["rev-parse", "main"], { cwd: root });
  const wt = await createWorktree(root, session, tip);
  await Deno.writeTextFile(join(wt.path, `src/new_${session}.ts`), "export {};\n");
  await git(["add", "-A"], { cwd: wt.path });
  await git(["commit", "-qm", "w"], { cwd: wt.path });
  b.start();
  const out = await mergeAgentBranch(root, {
    target: "main",
    agent: `agent/${session}`,
    taskId: session,
  });
  b.end();
  if (out.status !== "merged") throw new Error(JSON.stringify(out));
});
