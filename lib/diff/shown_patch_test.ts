import assert from "node:assert/strict";
import { shownPatch } from "./shown_patch.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const A = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n";
const B = "diff --git a/b b/b\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-diff --git a/c b/c\n+z\n";

Deno.test("shownPatch() keeps a patch that fits, and cuts one that does not at a file's end (table)", () => {
  const both = A + B;
  const cases: [string, string, number, number, string, boolean][] = [
    ["fits", both, both.length, 1000, both, false],
    ["exactly fits", both, both.length, both.length, both, false],
    ["the second file does not fit", both, both.length, both.length - 1, A, true],
    [
      "a content line imitating a header is not a boundary",
      both,
      both.length,
      A.length + 40,
      A,
      true,
    ],
    ["the first file alone is too large", both, both.length, 10, "", true],
    [
      "only the first bytes were read",
      both.slice(0, A.length + 15),
      5_000_000,
      A.length + 15,
      A,
      true,
    ],
  ];
  for (const [name, patch, total, max, want, cut] of cases) {
    const out = shownPatch(enc(patch), { total, files: 2 }, max);
    assert.equal(dec(out.bytes), want, name);
    assert.deepEqual(out.truncated, cut ? { bytes: total, files: 2 } : undefined, name);
  }
});
