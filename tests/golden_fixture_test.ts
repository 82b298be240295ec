import assert from "node:assert/strict";
import { join } from "node:path";
import { GOLDEN_DIR, SHARED_GOLDEN_DIR } from "./helpers.ts";

const FILES = [
  "journal.jsonl",
  "board.canonical.json",
  "expected.json",
  "review/diffs/t-parser.diff",
];

/** Whether the shared original is beside this checkout (a bare clone has only the copy). */
function sharedPresent(): boolean {
  try {
    return Deno.statSync(SHARED_GOLDEN_DIR).isDirectory;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

// Without the original there is nothing to compare: the run says "ignored", never "ok".
Deno.test({
  name: "the vendored golden run is byte-identical to ../shared/examples/run-golden",
  ignore: !sharedPresent(),
  fn: async () => {
    for (const file of FILES) {
      const ours = await Deno.readFile(join(GOLDEN_DIR, file));
      const shared = await Deno.readFile(join(SHARED_GOLDEN_DIR, file));
      assert.deepEqual(ours, shared, `${file} differs: copy ../shared/examples/run-golden again`);
    }
  },
});
