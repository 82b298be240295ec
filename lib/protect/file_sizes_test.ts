import assert from "node:assert/strict";
import type { RawChange } from "../diff/raw_listing.ts";
import {
  maxLandedFileBytes,
  newFileIds,
  oldFileIds,
  oversizedFiles,
  UnknownSizeError,
} from "./file_sizes.ts";

const Z = "0".repeat(40);
const id = (c: string) => c.repeat(40);
const LIMIT = 1000;

/** One listed change: `old`/`new` as `[mode, id]`, absent for nothing on that side. */
function change(path: string, old?: [string, string], now?: [string, string]): RawChange {
  return {
    path,
    oldMode: old?.[0] ?? "000000",
    oldId: old?.[1] ?? Z,
    mode: now?.[0] ?? "000000",
    id: now?.[1] ?? Z,
  };
}

const SIZES = new Map([
  [id("a"), 5000], // big
  [id("b"), 4000], // big, smaller than a
  [id("c"), 10], // small
  [id("d"), LIMIT], // exactly at the limit
  [id("e"), LIMIT + 1], // one byte over
]);

Deno.test("oversizedFiles() holds only files the diff adds or grows over the limit (table)", () => {
  const F = "100644";
  const cases: [string, RawChange[], { path: string; bytes: number }[]][] = [
    ["an added big file", [change("big.bin", undefined, [F, id("a")])], [
      { path: "big.bin", bytes: 5000 },
    ]],
    ["an added executable", [change("tool", undefined, ["100755", id("a")])], [
      { path: "tool", bytes: 5000 },
    ]],
    ["a file grown over the limit", [change("log.txt", [F, id("c")], [F, id("a")])], [
      { path: "log.txt", bytes: 5000 },
    ]],
    ["a big file grown further", [change("data", [F, id("b")], [F, id("a")])], [
      { path: "data", bytes: 5000 },
    ]],
    ["a big file that shrank (still over)", [change("data", [F, id("a")], [F, id("b")])], []],
    ["a small added file", [change("x", undefined, [F, id("c")])], []],
    ["a file exactly at the limit", [change("x", undefined, [F, id("d")])], []],
    ["a file one byte over", [change("x", undefined, [F, id("e")])], [{ path: "x", bytes: 1001 }]],
    ["a big file removed", [change("big", [F, id("a")])], []],
    ["a rename of a big file (as listed: source removed, destination added)", [
      change("old/big", [F, id("a")]),
      change("new/big", undefined, [F, id("a")]),
    ], []],
    ["a rename with an edit that grows it (the destination is new content)", [
      change("old/big", [F, id("b")]),
      change("new/big", undefined, [F, id("a")]),
    ], [{ path: "new/big", bytes: 5000 }]],
    ["a copy of a big file the diff does not touch (a new file of that size)", [
      change("copy", undefined, [F, id("a")]),
    ], [{ path: "copy", bytes: 5000 }]],
    ["a big file's mode change alone", [change("big", [F, id("a")], ["100755", id("a")])], []],
    ["a symlink (its blob is where it points)", [change("l", undefined, ["120000", id("a")])], []],
    [
      "a gitlink (another repository's commit)",
      [change("sub", undefined, ["160000", id("a")])],
      [],
    ],
    ["a link turned into a big file", [change("p", ["120000", id("c")], [F, id("a")])], [
      { path: "p", bytes: 5000 },
    ]],
    ["a binary or text file alike: sizes are git's", [
      change("img.png", undefined, [F, id("b")]),
      change("notes.txt", undefined, [F, id("c")]),
    ], [{ path: "img.png", bytes: 4000 }]],
  ];
  for (const [name, changes, want] of cases) {
    assert.deepEqual(oversizedFiles(changes, SIZES, LIMIT), want, name);
  }
});

Deno.test("oversizedFiles() holds nothing when the limit is off, and asks for no size", () => {
  const changes = [change("big", undefined, ["100644", id("f")])];
  assert.deepEqual(oversizedFiles(changes, new Map(), null), []);
  assert.deepEqual(oldFileIds(changes, new Map(), null), []);
});

Deno.test("oversizedFiles() refuses to guess a size git's objects did not give", () => {
  assert.throws(
    () => oversizedFiles([change("x", undefined, ["100644", id("f")])], SIZES, LIMIT),
    UnknownSizeError,
  );
});

Deno.test("newFileIds() and oldFileIds() ask for the tip's files first, the base's only of a big one", () => {
  const changes = [
    change("grown", ["100644", id("c")], ["100644", id("a")]),
    change("small", ["100644", id("b")], ["100644", id("c")]),
    change("link", undefined, ["120000", id("b")]),
  ];
  assert.deepEqual(newFileIds(changes), [id("a"), id("c")]);
  assert.deepEqual(oldFileIds(changes, SIZES, LIMIT), [id("c")]);
});

Deno.test("maxLandedFileBytes() reads megabytes as MiB, and off as no limit", () => {
  assert.equal(maxLandedFileBytes(10), 10 * 1024 * 1024);
  assert.equal(maxLandedFileBytes(0.5), 512 * 1024);
  assert.equal(maxLandedFileBytes("off"), null);
  assert.equal(maxLandedFileBytes(false), null);
});
