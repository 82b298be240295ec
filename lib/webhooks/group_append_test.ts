import assert from "node:assert/strict";
import { join } from "node:path";
import { GroupAppender } from "./group_append.ts";

Deno.test("group append: concurrent appends share batches; each resolves with its line in the file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "group-append-" });
  try {
    const path = join(dir, "log.jsonl");
    const file = await GroupAppender.open(path);
    const lines = Array.from({ length: 300 }, (_, i) => `{"n":${i}}`);
    await Promise.all(lines.map((line) =>
      file.append(line).then(() => {
        assert.ok(Deno.readTextFileSync(path).includes(`${line}\n`), `${line} resolved unwritten`);
      })
    ));
    await file.close();
    const written = (await Deno.readTextFile(path)).trim().split("\n");
    assert.deepEqual(written.sort(), [...lines].sort());
    await assert.rejects(() => file.append("late"), /closed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("group append: a rewrite replaces the file and the appends queued meanwhile follow it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "group-append-" });
  try {
    const path = join(dir, "log.jsonl");
    const file = await GroupAppender.open(path);
    await Promise.all(["a", "b", "c"].map((l) => file.append(l)));
    const before = file.append("d");
    file.rewrite(() => "kept\n");
    const after = ["e", "f"].map((l) => file.append(l));
    await Promise.all([before, ...after]);
    await file.close();
    const text = await Deno.readTextFile(path);
    assert.ok(text.startsWith("kept\n"), text);
    assert.deepEqual(text.trim().split("\n").slice(1).sort(), ["e", "f"]);
    // Appends after a reopen go on at the end of the file as it is now.
    const again = await GroupAppender.open(path);
    await again.append("g");
    await again.close();
    const lines = (await Deno.readTextFile(path)).trim().split("\n");
    assert.equal(lines.length, 4);
    assert.equal(lines[3], "g");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
