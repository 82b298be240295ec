import assert from "node:assert/strict";
import { join } from "node:path";
import { isSafeRef, parseRefFile, readRefFile, type RefFile, resolveRef } from "./ref_files.ts";
import { tempDir } from "../../tests/helpers.ts";

const A = "a".repeat(40);
const B = "b".repeat(64);

/** `[what a HEAD written by an agent says, how it is read]`. */
const TEXTS: [string, RefFile | "unusable"][] = [
  [`${A}\n`, { kind: "commit", oid: A }],
  [B, { kind: "commit", oid: B }],
  ["ref: refs/heads/agent/s-1\n", { kind: "ref", ref: "refs/heads/agent/s-1" }],
  ["ref: ../../../../etc/passwd\n", "unusable"],
  ["ref: refs/heads/../../../config\n", "unusable"],
  ["ref: refs/heads/.hidden\n", "unusable"],
  ["ref: refs/heads/x.lock\n", "unusable"],
  ["ref: refs/heads//x\n", "unusable"],
  ["ref: refs/heads/x/\n", "unusable"],
  ["ref: /abs/refs/heads/x\n", "unusable"],
  ["ref: HEAD\n", "unusable"],
  [`ref: refs/heads/${"x".repeat(300)}\n`, "unusable"],
  [`${A}\nsecond line\n`, "unusable"],
  [A.toUpperCase(), "unusable"],
  ["", "unusable"],
  ["ref: refs/heads/a b\n", "unusable"],
];

for (const [text, expected] of TEXTS) {
  Deno.test(`parseRefFile(): ${JSON.stringify(text.slice(0, 60))}`, () => {
    const got = parseRefFile(text);
    if (expected === "unusable") assert.equal(got.kind, "unusable", JSON.stringify(got));
    else assert.deepEqual(got, expected);
  });
}

Deno.test("isSafeRef() takes refs under refs/ with plain components only", () => {
  for (const ok of ["refs/heads/main", "refs/heads/agent/s-1_2.3", "refs/tags/v1+x@y"]) {
    assert.equal(isSafeRef(ok), true, ok);
  }
  for (const bad of ["heads/main", "refs/heads/a..b", "refs/heads/a\nb", "refs/heads/a:b"]) {
    assert.equal(isSafeRef(bad), false, bad);
  }
});

Deno.test("readRefFile() never follows a link, reads no directory and no long file", async () => {
  await using dir = await tempDir();
  const secret = join(dir.path, "secret");
  await Deno.writeTextFile(secret, `${A}\n`);
  await Deno.symlink(secret, join(dir.path, "HEAD"));
  assert.deepEqual(await readRefFile(join(dir.path, "HEAD")), {
    kind: "unusable",
    why: "it is a symbolic link",
  });
  await Deno.mkdir(join(dir.path, "d"));
  assert.equal((await readRefFile(join(dir.path, "d"))).kind, "unusable");
  await Deno.writeTextFile(join(dir.path, "long"), `${A}\n`.repeat(100));
  assert.match(JSON.stringify(await readRefFile(join(dir.path, "long"))), /bytes long/);
  assert.match(JSON.stringify(await readRefFile(join(dir.path, "none"))), /missing/);
});

Deno.test("resolveRef() follows symbolic refs inside its directory only, up to five, then packed-refs", async () => {
  await using dir = await tempDir();
  const refs = dir.path;
  const write = async (ref: string, text: string) => {
    await Deno.mkdir(join(refs, ref, ".."), { recursive: true });
    await Deno.writeTextFile(join(refs, ref), text);
  };
  await write("refs/heads/a", "ref: refs/heads/b\n");
  await write("refs/heads/b", `${A}\n`);
  assert.deepEqual(await resolveRef(refs, "refs/heads/a"), { kind: "commit", oid: A });
  // Told not to follow one: unusable (the ref it names may live in another directory).
  const direct = { followSymbolic: false } as const;
  assert.match(JSON.stringify(await resolveRef(refs, "refs/heads/a", direct)), /symbolic ref/);
  assert.deepEqual(await resolveRef(refs, "refs/heads/b", direct), { kind: "commit", oid: A });
  // A loop ends.
  await write("refs/heads/x", "ref: refs/heads/y\n");
  await write("refs/heads/y", "ref: refs/heads/x\n");
  assert.match(JSON.stringify(await resolveRef(refs, "refs/heads/x")), /more than 5/);
  // A directory on the way that is a link to elsewhere is not followed.
  await using elsewhere = await tempDir();
  await Deno.mkdir(join(elsewhere.path, "heads"));
  await Deno.writeTextFile(join(elsewhere.path, "heads", "main"), `${A}\n`);
  await Deno.symlink(elsewhere.path, join(refs, "refs", "remotes"));
  assert.match(JSON.stringify(await resolveRef(refs, "refs/remotes/heads/main")), /is a link/);
  // A ref file that is a link is not read.
  await Deno.symlink(join(elsewhere.path, "heads", "main"), join(refs, "refs", "heads", "l"));
  assert.match(JSON.stringify(await resolveRef(refs, "refs/heads/l")), /symbolic link/);
  // Not loose: the packed-refs text given.
  const packedRefs = `# pack-refs with: peeled\n${B} refs/heads/packed\n`;
  assert.deepEqual(await resolveRef(refs, "refs/heads/packed", { packedRefs }), {
    kind: "commit",
    oid: B,
  });
  assert.match(JSON.stringify(await resolveRef(refs, "refs/heads/none/x")), /not there/);
  assert.match(JSON.stringify(await resolveRef(refs, "refs/../../x")), /not a ref/);
});
