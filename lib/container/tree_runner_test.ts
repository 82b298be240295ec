import assert from "node:assert/strict";
import { join } from "node:path";
import { reclaimHandedTrees } from "./tree_runner.ts";
import { chownTree } from "./git_shadow.ts";
import { tempDir } from "../../tests/helpers.ts";

Deno.test({
  name: "reclaimHandedTrees(): a tree still handed to a container's user (the service was " +
    "killed during a gate or a teardown) is the service's again at the next start",
  ignore: Deno.uid() !== 0, // handing a tree to another user needs root
  async fn() {
    await using ws = await tempDir();
    const tree = join(ws.path, "tree");
    await Deno.mkdir(join(tree, "src"), { recursive: true });
    await Deno.writeTextFile(join(tree, "src", "a.py"), "x = 1\n");
    await chownTree([tree], { uid: 65532, gid: 65532 });
    const runtime = join(ws.path, "runtime");
    await Deno.mkdir(join(runtime, "handed"), { recursive: true });
    await Deno.writeTextFile(
      join(runtime, "handed", "gate-1.json"),
      JSON.stringify({ paths: [tree, join(ws.path, "gone")], owner: { uid: 0, gid: 0 } }),
    );
    assert.deepEqual(await reclaimHandedTrees(runtime), []);
    for (const p of [tree, join(tree, "src"), join(tree, "src", "a.py")]) {
      assert.equal((await Deno.lstat(p)).uid, 0, p);
    }
    assert.deepEqual(await Array.fromAsync(Deno.readDir(join(runtime, "handed"))), []);
    assert.deepEqual(await reclaimHandedTrees(join(ws.path, "none")), [], "no records: nothing");
  },
});
