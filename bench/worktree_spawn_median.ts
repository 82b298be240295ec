/**
 * Medians of the spawn and land benchmarks over a fixed number of runs (deno bench reports
 * averages and percentiles from p75 up). Usage: `deno run -A bench/worktree_spawn_median.ts [runs]`.
 */
import { gitText } from "../lib/git/git.ts";
import { benchRepo, landOnce, prepareAgent, spawnOnce } from "./_fixture.ts";

const runs = Number(Deno.args[0] ?? 30);
const root = await benchRepo();
try {
  const base = await gitText(["rev-parse", "main"], { cwd: root });
  const spawn: number[] = [];
  const land: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    await spawnOnce(root, `b${i}`, base);
    spawn.push(performance.now() - t);
    await prepareAgent(root, `m${i}`);
    t = performance.now();
    await landOnce(root, `m${i}`);
    land.push(performance.now() - t);
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const fmt = (xs: number[]) =>
    `median ${median(xs).toFixed(1)} ms, min ${Math.min(...xs).toFixed(1)} ms, max ${
      Math.max(...xs).toFixed(1)
    } ms`;
  console.log(`runs: ${runs}, repository: 200 files, load average: ${Deno.loadavg().join(" ")}`);
  console.log(`spawn overhead (createWorktree + true): ${fmt(spawn)}`);
  console.log(`gate-less land (merge into checked-out main): ${fmt(land)}`);
} finally {
  await Deno.remove(root, { recursive: true });
}
