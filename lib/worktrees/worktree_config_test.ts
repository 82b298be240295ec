import assert from "node:assert/strict";
import { join } from "node:path";
import { git } from "../git/git.ts";
import { tempDir } from "../../tests/helpers.ts";
import { gitConfigValue, serviceWorktreeConfig } from "./worktree_config.ts";

const HOSTILE_VALUES = [
  "/plain/path",
  "/with space/in it",
  " leading space",
  "trailing space ",
  "semi;colon",
  "hash#mark",
  'double"quote',
  "back\\slash",
  "tab\there",
  "new\nline",
  'all of it: " \\ ; # \t',
  "ünïcode/pâth",
];

Deno.test("gitConfigValue() writes every value exactly as git config does (quotes, escapes, hostile paths)", async () => {
  await using dir = await tempDir("svc-config-");
  for (const value of HOSTILE_VALUES) {
    const file = join(dir.path, "cfg");
    await git(["config", "-f", file, "core.excludesFile", value], { cwd: dir.path });
    const written = await Deno.readTextFile(file);
    await Deno.remove(file);
    assert.equal(`[core]\n\texcludesFile = ${gitConfigValue(value)}\n`, written, value);
    // …and git reads back the value itself.
    await Deno.writeTextFile(file, `[core]\n\texcludesFile = ${gitConfigValue(value)}\n`);
    const read = await git(["config", "-f", file, "--get", "core.excludesFile"], {
      cwd: dir.path,
    });
    assert.equal(read.stdout, value + "\n", value);
    await Deno.remove(file);
  }
});

Deno.test("serviceWorktreeConfig() names the worktree's own exclude file", () => {
  assert.equal(
    serviceWorktreeConfig("/r/.git/worktrees/s-1"),
    "[core]\n\texcludesFile = /r/.git/worktrees/s-1/service-exclude\n",
  );
});
