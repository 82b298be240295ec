import assert from "node:assert/strict";
import { join } from "node:path";
import { readGitSetupRecord, writeGitSetupRecord } from "./git_setup.ts";

const setup = { hooks: { ".git/hooks/pre-commit": "ab12" }, config: { "core.pager": "less" } };

Deno.test("a git setup record reads back as written, with and without its end", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "git_setup.json");
    await writeGitSetupRecord(path, { before: setup });
    assert.deepEqual(readGitSetupRecord(path), { before: setup });
    await writeGitSetupRecord(path, { before: setup, after: { hooks: {}, config: {} } });
    assert.deepEqual(readGitSetupRecord(path), {
      before: setup,
      after: { hooks: {}, config: {} },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// What an agent run as a host process could leave in `.sdd/runs/<id>/git_setup.json`: none of
// it is taken as a record (status then says nothing of the setup, and never throws).
const BROKEN: [string, string][] = [
  ["not JSON", "{"],
  ["empty", ""],
  ["null", "null"],
  ["an array", "[]"],
  ["no before", JSON.stringify({ after: setup })],
  ["before not an object", JSON.stringify({ before: "x" })],
  ["hooks missing", JSON.stringify({ before: { config: {} } })],
  ["a hook's hash not a string", JSON.stringify({ before: { hooks: { h: 1 }, config: {} } })],
  ["config an array", JSON.stringify({ before: { hooks: {}, config: ["a"] } })],
  ["after not a setup", JSON.stringify({ before: setup, after: { hooks: {} } })],
  ["after null", JSON.stringify({ before: setup, after: null })],
];

for (const [what, text] of BROKEN) {
  Deno.test(`a git setup record that is ${what} is no record`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const path = join(dir, "git_setup.json");
      await Deno.writeTextFile(path, text);
      assert.equal(readGitSetupRecord(path), undefined);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("a git setup record that is missing, a directory, a FIFO or a link is no record, at once", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.equal(readGitSetupRecord(join(dir, "missing.json")), undefined);
    assert.equal(readGitSetupRecord(dir), undefined);
    const fifo = join(dir, "fifo.json");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(made.code, 0);
    assert.equal(readGitSetupRecord(fifo), undefined); // a read would block forever
    const real = join(dir, "real.json");
    await writeGitSetupRecord(real, { before: setup });
    await Deno.symlink(real, join(dir, "link.json"));
    assert.equal(readGitSetupRecord(join(dir, "link.json")), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
