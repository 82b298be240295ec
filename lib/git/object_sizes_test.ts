import assert from "node:assert/strict";
import { tempRepo } from "./_test_repo.ts";
import { blobSizes, objectSizeCounts } from "./object_sizes.ts";

Deno.test("blobSizes() reads a loose blob's size from its header, and asks git for packed ones", async () => {
  await using repo = await tempRepo({ "small.txt": "hi\n" });
  await repo.write("big.txt", "x".repeat(300_000));
  await repo.commitAll("big");
  const big = await repo.git(["rev-parse", "HEAD:big.txt"]);
  const small = await repo.git(["rev-parse", "HEAD:small.txt"]);
  const tree = await repo.git(["rev-parse", "HEAD^{tree}"]);
  const before = { ...objectSizeCounts };
  const loose = await blobSizes(repo.root, [big, small, big]);
  assert.deepEqual([...loose], [[big, 300_000], [small, 3]]);
  assert.equal(objectSizeCounts.asked, before.asked, "no git process for loose blobs");
  // Packed: the same sizes, from git.
  await repo.git(["repack", "-a", "-d", "-q"]);
  await repo.git(["prune-packed"]);
  const packed = await blobSizes(repo.root, [big, small, tree, "f".repeat(40)]);
  assert.deepEqual([...packed].sort(), [[big, 300_000], [small, 3]].sort());
  assert.equal(objectSizeCounts.asked - before.asked, 4, "asked of cat-file once, all four");
});

Deno.test("blobSizes() asks git when a loose object's file is not a plain file", async () => {
  await using repo = await tempRepo({ "a.txt": "abc\n" });
  const blob = await repo.git(["rev-parse", "HEAD:a.txt"]);
  const path = `${repo.root}/.git/objects/${blob.slice(0, 2)}/${blob.slice(2)}`;
  const bytes = await Deno.readFile(path);
  await Deno.remove(path);
  await Deno.writeFile(`${path}.real`, bytes);
  await Deno.symlink(`${path}.real`, path);
  const before = objectSizeCounts.asked;
  assert.deepEqual([...await blobSizes(repo.root, [blob])], [[blob, 4]]);
  assert.equal(objectSizeCounts.asked - before, 1);
});

Deno.test("blobSizes() asks git when a loose object is a FIFO: nothing waits on it", async () => {
  await using repo = await tempRepo({ "a.txt": "abc\n" });
  const blob = await repo.git(["rev-parse", "HEAD:a.txt"]);
  await repo.git(["repack", "-a", "-d", "-q"]); // git keeps a copy it can answer from
  const path = `${repo.root}/.git/objects/${blob.slice(0, 2)}/${blob.slice(2)}`;
  await Deno.remove(path).catch(() => {});
  await Deno.mkdir(`${repo.root}/.git/objects/${blob.slice(0, 2)}`, { recursive: true });
  const mk = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(mk.code, 0);
  assert.deepEqual([...await blobSizes(repo.root, [blob])], [[blob, 4]]);
});
