import assert from "node:assert/strict";
import {
  parseRawListing,
  type RawChange,
  RawListingError,
  splitRawAndPatch,
} from "./raw_listing.ts";

const Z = "0".repeat(40);
const A = "a".repeat(40);
const B = "b".repeat(40);
const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("parseRawListing() lists a rename as its source removed and its destination, a copy as its destination (table)", () => {
  const N = { oldMode: "000000", oldId: Z }; // nothing on the base's side
  const cases: [string, string, RawChange[]][] = [
    ["nothing", "", []],
    ["a change", `:100644 100644 ${A} ${B} M\0x.txt\0`, [
      { path: "x.txt", mode: "100644", id: B, oldMode: "100644", oldId: A },
    ]],
    ["a removal", `:100644 000000 ${A} ${Z} D\0x\0`, [
      { path: "x", mode: "000000", id: Z, oldMode: "100644", oldId: A },
    ]],
    ["a rename with an edit", `:100644 100755 ${A} ${B} R087\0old\0new\0`, [
      { path: "old", mode: "000000", id: Z, oldMode: "100644", oldId: A },
      { path: "new", mode: "100755", id: B, ...N },
    ]],
    ["a copy", `:120000 120000 ${A} ${A} C100\0src\0dst\0`, [
      { path: "dst", mode: "120000", id: A, ...N },
    ]],
    ["names holding colons, newlines and spaces", `:000000 100644 ${Z} ${A} A\0:1 2\n3 M\0`, [
      { path: ":1 2\n3 M", mode: "100644", id: A, ...N },
    ]],
  ];
  for (const [name, raw, want] of cases) assert.deepEqual(parseRawListing(bytes(raw)), want, name);
});

Deno.test("splitRawAndPatch() gives the patch's bytes after the records' separator, untouched", () => {
  const patch = "diff --git a/x b/x\n:100644 looks like a record\n\0\n";
  const out = splitRawAndPatch(bytes(`:100644 100644 ${A} ${B} M\0x\0\0${patch}`));
  assert.deepEqual(out.changes, [
    { path: "x", mode: "100644", id: B, oldMode: "100644", oldId: A },
  ]);
  assert.equal(new TextDecoder().decode(out.patch), patch);
  assert.deepEqual(splitRawAndPatch(new Uint8Array()), {
    changes: [],
    patch: new Uint8Array(),
    records: 0,
  });
});

Deno.test("parseRawListing() refuses output that is not records, rather than guess (table)", () => {
  for (
    const raw of [
      `:100644 100644 ${A} ${B} M\0x`, // a path without its NUL
      `:100644 ${A} M\0x\0`, // fields missing
      `:100644 100644 ${A} ${B} R100\0old\0`, // a rename without its destination
      "diff --git a/x b/x\n", // a patch where records belong
      `:100644 100644 ${A} ${B} M\0x\0\0diff`, // a patch after a listing asked alone
    ]
  ) assert.throws(() => parseRawListing(bytes(raw)), RawListingError, JSON.stringify(raw));
});
