import assert from "node:assert/strict";
import { getHeapSpaceStatistics } from "node:v8";
import { runInNewContext } from "node:vm";
import { releaseHeap } from "./heap_release.ts";

const youngBytes = () =>
  getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.space_size;

Deno.test("releaseHeap hands back the young generation a burst of surviving objects grew", () => {
  const kept: { i: number; s: string }[] = [];
  for (let i = 0; i < 400_000; i++) kept.push({ i, s: `row-${i}` }); // survives: the nursery grows
  const grown = youngBytes();
  assert.equal(releaseHeap(), true);
  assert.ok(youngBytes() < grown, `young generation ${youngBytes()} B, was ${grown} B`);
  assert.equal(kept.length, 400_000); // nothing live was lost
  assert.equal(kept[399_999].s, "row-399999");
  assert.equal("gc" in globalThis, false); // not installed on the program's global object
  assert.equal(runInNewContext("typeof gc"), "undefined"); // nor on contexts created later
});
