import assert from "node:assert/strict";
import { join } from "node:path";
import { GOLDEN_DIR, SHARED_GOLDEN_DIR } from "./helpers.ts";

const FILES = [
  "journal.jsonl",
  "board.canonical.json",
  "expected.json",
  "review/diffs/t-parser.diff",
];

Deno.test("the vendored golden run is byte-identical to ../shared/examples/run-golden", async (t) => {
  try {
    await Deno.stat(SHARED_GOLDEN_DIR);
  } catch {
    await t.step({ name: "shared/ is not beside this checkout: nothing to compare", fn: () => {} });
    return;
  }
  for (const file of FILES) {
    const ours = await Deno.readFile(join(GOLDEN_DIR, file));
    const shared = await Deno.readFile(join(SHARED_GOLDEN_DIR, file));
    assert.deepEqual(ours, shared, `${file} differs: copy ../shared/examples/run-golden again`);
  }
});
