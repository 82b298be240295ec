/**
 * `deno bench`: projection of a 100 000-row journal — first fold (cold cache) and repeated
 * requests on an unchanged or slightly grown journal. `bench/projection_report.ts` reports the
 * same figures from a fresh process plus the CPython fold ratio.
 */
import { join } from "node:path";
import { projectJournal } from "../lib/board/projection.ts";
import { benchJournal } from "./_journal_fixture.ts";

const dir = await Deno.makeTempDir({ prefix: "bench-projection-" });
const { text, head } = benchJournal(100_000);
const cold = join(dir, "cold.jsonl");
const warm = join(dir, "warm.jsonl");
const grown = join(dir, "grown.jsonl");
await Deno.writeTextFile(cold, text);
await Deno.writeTextFile(warm, text);
await Deno.writeTextFile(grown, text);
await projectJournal("warm", warm);
await projectJournal("grown", grown);
let next = 100_000, prev = head;

let coldRound = 0;
Deno.bench("first projection of 100k rows (full chain re-walk)", { n: 5, warmup: 0 }, async (b) => {
  // A fresh path each time defeats the cache: this is the first request for that journal.
  const path = join(dir, `cold-${coldRound++}.jsonl`);
  await Deno.copyFile(cold, path);
  b.start();
  await projectJournal("cold", path);
  b.end();
});

Deno.bench("repeated projection, unchanged 100k-row journal", { n: 30 }, async () => {
  await projectJournal("warm", warm);
});

Deno.bench("repeated projection after 10 new rows", { n: 30 }, async () => {
  const more = benchJournal(10, next, prev);
  next += 10;
  prev = more.head;
  await Deno.writeTextFile(grown, more.text, { append: true });
  await projectJournal("grown", grown);
});
