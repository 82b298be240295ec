import assert from "node:assert/strict";
import { join } from "node:path";
import { SpecFiles } from "./spec_files.ts";

/** A temporary directory with `open/` and `claimed/`, like the backlog's. */
async function backlog(): Promise<{ root: string; open: string; claimed: string }> {
  const root = await Deno.makeTempDir();
  const open = join(root, "open");
  const claimed = join(root, "claimed");
  await Deno.mkdir(open);
  await Deno.mkdir(claimed);
  return { root, open, claimed };
}

/** The names in `dir`, sorted. */
async function names(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir), (e) => e.name)).sort();
}

Deno.test("SpecFiles: a superseded spec's file, once its rename is durable, takes the next spec of its new directory: same inode, exactly the new bytes (a longer old spec cut)", async () => {
  const { root, open, claimed } = await backlog();
  const files = new SpecFiles();
  try {
    await files.write(join(open, "a.yaml"), "id: a\ngoal: " + "x".repeat(5000) + "\n");
    const inode = (await Deno.stat(join(open, "a.yaml"))).ino;
    await files.write(join(claimed, "a.yaml"), "id: a\nstatus: CLAIMED\n");
    assert.equal(files.retire(join(open, "a.yaml"), claimed), true);
    assert.deepEqual(await names(open), []);
    await files.settled();

    await files.write(join(claimed, "b.yaml"), "id: b\n");
    assert.equal((await Deno.stat(join(claimed, "b.yaml"))).ino, inode);
    assert.equal(await Deno.readTextFile(join(claimed, "b.yaml")), "id: b\n");
    assert.deepEqual(await names(claimed), ["a.yaml", "b.yaml"]);
  } finally {
    await files.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("SpecFiles: a retired file is never written before its rename is durable; until then a write creates its own file", async () => {
  const { root, open, claimed } = await backlog();
  const files = new SpecFiles();
  try {
    await files.write(join(open, "a.yaml"), "id: a\n");
    const inode = (await Deno.stat(join(open, "a.yaml"))).ino;
    await files.write(join(claimed, "a.yaml"), "id: a\nstatus: CLAIMED\n");
    files.retire(join(open, "a.yaml"), claimed);
    // No await in between: the directory syncs after the rename have not finished.
    const written = files.write(join(claimed, "b.yaml"), "id: b\n");
    await written;
    assert.notEqual((await Deno.stat(join(claimed, "b.yaml"))).ino, inode);
    const kept = (await names(claimed)).filter((n) => n.includes(".tmp-"));
    assert.equal(kept.length, 1, `one retired file kept: ${kept}`);
    assert.match(kept[0], new RegExp(`^a\\.yaml\\.tmp-${Deno.pid}-`));
  } finally {
    await files.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("SpecFiles: retiring a file that is not there says so and keeps nothing; close() deletes every kept file", async () => {
  const { root, open, claimed } = await backlog();
  const files = new SpecFiles();
  try {
    assert.equal(files.retire(join(open, "missing.yaml"), claimed), false);
    for (const id of ["a", "b", "c"]) {
      await files.write(join(open, `${id}.yaml`), `id: ${id}\n`);
      await files.write(join(claimed, `${id}.yaml`), `id: ${id}\nstatus: CLAIMED\n`);
      files.retire(join(open, `${id}.yaml`), claimed);
    }
    await files.close();
    assert.deepEqual(await names(claimed), ["a.yaml", "b.yaml", "c.yaml"]);
    assert.deepEqual(await names(open), []);
    // Closed: a superseded spec is deleted, not kept.
    await files.write(join(open, "d.yaml"), "id: d\n");
    await files.write(join(claimed, "d.yaml"), "id: d\nstatus: CLAIMED\n");
    assert.equal(files.retire(join(open, "d.yaml"), claimed), true);
    assert.deepEqual(await names(claimed), ["a.yaml", "b.yaml", "c.yaml", "d.yaml"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("SpecFiles: a write through a recycled file that fails (a directory in the spec's place) throws the cause naming the spec and leaves no temporary file behind", async () => {
  const { root, open, claimed } = await backlog();
  const files = new SpecFiles();
  try {
    await files.write(join(open, "a.yaml"), "id: a\n");
    await files.write(join(claimed, "a.yaml"), "id: a\nstatus: CLAIMED\n");
    files.retire(join(open, "a.yaml"), claimed);
    await files.settled();
    // The recycled file is written and synced, but it cannot be renamed over a directory.
    await Deno.mkdir(join(claimed, "b.yaml"));
    await assert.rejects(
      files.write(join(claimed, "b.yaml"), "id: b\n"),
      /Is a directory.*claimed\/b\.yaml/,
    );
    assert.deepEqual(await names(claimed), ["a.yaml", "b.yaml"]);
    assert.equal((await Deno.stat(join(claimed, "b.yaml"))).isDirectory, true);
  } finally {
    await files.close();
    await Deno.remove(root, { recursive: true });
  }
});
