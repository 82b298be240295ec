/**
 * Reports the projection figures of the foundation issue on a 100 000-row (~40 MB) journal:
 * first projection in a fresh process (including the full chain re-walk), repeated requests on
 * an unchanged and a slightly grown journal, and the CPython fold of the same rows.
 *
 *   deno run -A bench/projection_report.ts
 */
import { join } from "node:path";
import { benchJournal } from "./_journal_fixture.ts";

const ROWS = 100_000;
const dir = await Deno.makeTempDir({ prefix: "bench-report-" });
const path = join(dir, "journal.jsonl");
const { text, head } = benchJournal(ROWS);
await Deno.writeTextFile(path, text);
console.log(
  `journal: ${ROWS} rows, ${(text.length / 1e6).toFixed(1)} MB (${
    Math.round(text.length / ROWS)
  } B/row)`,
);

const probe = join(dir, "probe.ts");
const projection = new URL("../lib/board/projection.ts", import.meta.url).href;
const fixture = new URL("./_journal_fixture.ts", import.meta.url).href;
await Deno.writeTextFile(
  probe,
  `import { projectJournal } from ${JSON.stringify(projection)};
import { benchJournal } from ${JSON.stringify(fixture)};
const path = Deno.args[0];
let t = performance.now();
const first = await projectJournal("bench", path);
const firstMs = performance.now() - t;
const unchanged = [];
for (let i = 0; i < 15; i++) { t = performance.now(); await projectJournal("bench", path); unchanged.push(performance.now() - t); }
const grown = [];
let prev = ${JSON.stringify(head)}, next = ${ROWS};
for (let i = 0; i < 15; i++) {
  const more = benchJournal(10, next, prev); next += 10; prev = more.head;
  await Deno.writeTextFile(path, more.text, { append: true });
  t = performance.now(); const r = await projectJournal("bench", path); grown.push(performance.now() - t);
  if (!r.receipt.journal_verified) throw new Error("grown journal did not verify");
}
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
console.log(JSON.stringify({ firstMs, verified: first.receipt.journal_verified, unchangedMedian: med(unchanged), unchangedMax: Math.max(...unchanged), grownMedian: med(grown), grownMax: Math.max(...grown), hash: first.receipt.projection_hash }));
`,
);

const runs: {
  firstMs: number;
  unchangedMedian: number;
  grownMedian: number;
  unchangedMax: number;
  grownMax: number;
  hash: string;
}[] = [];
for (let i = 0; i < 3; i++) {
  await Deno.writeTextFile(path, text);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", probe, path],
    stderr: "inherit",
  }).output();
  runs.push(JSON.parse(new TextDecoder().decode(out.stdout)));
}
await Deno.writeTextFile(path, text);
const py = new URL("../scripts/fold.py", import.meta.url).pathname;
const pyTimes: number[] = [];
let pyHash = "";
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  const out = await new Deno.Command("python3", { args: [py, path] }).output();
  pyTimes.push(performance.now() - t);
  pyHash = JSON.parse(new TextDecoder().decode(out.stdout)).projection_hash;
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
const first = med(runs.map((r) => r.firstMs));
console.log(
  `first projection (fresh process, full re-walk): median ${first.toFixed(0)} ms of ${
    runs.map((r) => r.firstMs.toFixed(0)).join(", ")
  }`,
);
console.log(
  `repeated, unchanged: median ${med(runs.map((r) => r.unchangedMedian)).toFixed(1)} ms (worst ${
    Math.max(...runs.map((r) => r.unchangedMax)).toFixed(1)
  })`,
);
console.log(
  `repeated, +10 rows:  median ${med(runs.map((r) => r.grownMedian)).toFixed(1)} ms (worst ${
    Math.max(...runs.map((r) => r.grownMax)).toFixed(1)
  })`,
);
console.log(
  `CPython fold (scripts/fold.py, whole process): median ${
    med(pyTimes).toFixed(0)
  } ms; ratio CPython/Deno first = ${(med(pyTimes) / first).toFixed(2)}x`,
);
console.log(`same projection hash in both: ${pyHash === runs[0].hash}`);
await Deno.remove(dir, { recursive: true });
