import assert from "node:assert/strict";
import { join } from "node:path";
import { type CommandSetup, readCommandSetup, setupChanges } from "./command_setup.ts";
import { git } from "./git.ts";
import { tempDir } from "../../tests/helpers.ts";

Deno.test("readCommandSetup() lists hooks and the keys that run a program, not git's samples, other keys or what an include names", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await git(["init", "-q", "-b", "main"], { cwd: root });
  const quiet = await readCommandSetup(root);
  assert.deepEqual(quiet, { hooks: {}, config: {} }, "a fresh repository: samples only");

  await Deno.writeTextFile(join(root, ".git/hooks/post-commit"), "#!/bin/sh\necho hi\n");
  await Deno.symlink("/bin/true", join(root, ".git/hooks/pre-push"));
  await Deno.writeTextFile(join(root, "included"), '[filter "hidden"]\n\tclean = cat\n');
  for (
    const [key, value] of [
      ["user.name", "someone"],
      ["filter.evil.clean", "sh -c pwn"],
      ["alias.st", "!sh -c pwn"],
      ["core.fsmonitor", "pwn"],
      ["include.path", "../included"],
    ]
  ) await git(["config", key, value], { cwd: root });
  const setup = await readCommandSetup(root);
  assert.deepEqual(Object.keys(setup!.hooks).sort(), [
    ".git/hooks/post-commit",
    ".git/hooks/pre-push",
  ]);
  assert.equal(setup!.hooks[".git/hooks/pre-push"], "link to /bin/true");
  assert.deepEqual(setup!.config, {
    "filter.evil.clean": "sh -c pwn",
    "alias.st": "!sh -c pwn",
    "core.fsmonitor": "pwn",
    "include.path": "../included",
  });
});

Deno.test("setupChanges() names what was added, changed and removed, hooks then config, in order", () => {
  const before: CommandSetup = {
    hooks: { ".git/hooks/pre-commit": "aaa", ".git/hooks/old": "bbb" },
    config: { "filter.lfs.clean": "git-lfs clean -- %f" },
  };
  const after: CommandSetup = {
    hooks: { ".git/hooks/pre-commit": "ccc", ".git/hooks/post-commit": "ddd" },
    config: { "filter.lfs.clean": "git-lfs clean -- %f", "diff.x.textconv": "a\nb" },
  };
  assert.deepEqual(setupChanges(before, after), [
    "hook .git/hooks/old removed",
    "new hook .git/hooks/post-commit",
    "hook .git/hooks/pre-commit changed",
    "new config diff.x.textconv = a | b",
  ]);
  assert.deepEqual(setupChanges(after, after), [], "nothing changed, nothing said");
});
