/**
 * Spawn overhead per agent (worktree + process start) and gate-less landing time, in a
 * repository of ~200 files. Run: `deno bench -A bench/worktree_spawn_bench.ts`; for medians,
 * `deno run -A bench/worktree_spawn_median.ts`. Aim: worktree + `true` median <= 150 ms.
 */
import { gitText } from "../lib/git/git.ts";
import { benchRepo, landOnce, prepareAgent, spawnOnce } from "./_fixture.ts";

const root = await benchRepo();
const base = await gitText(["rev-parse", "main"], { cwd: root });
globalThis.addEventListener("unload", () => Deno.removeSync(root, { recursive: true }));

let n = 0;

Deno.bench("spawn overhead: createWorktree + start `true`", { group: "spawn" }, async (b) => {
  const session = `b${n++}`;
  b.start();
  await spawnOnce(root, session, base);
  b.end();
});

Deno.bench("gate-less land: merge-tree + commit-tree + advance checked-out main", {
  group: "merge",
}, async (b) => {
  const session = `m${n++}`;
  await prepareAgent(root, session);
  b.start();
  await landOnce(root, session);
  b.end();
});
