import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "../git/_test_repo.ts";
import { readCommandSetup } from "../git/command_setup.ts";
import { readGitSetupRecord, writeGitSetupRecord } from "../runs/git_setup.ts";
import { watchGitSetup } from "./git_setup_watch.ts";

Deno.test("a resumed run still names what a killed session's agent planted: its baseline is the setup as the run first began", async () => {
  await using repo = await tempRepo({ "README.md": "x\n" });
  const record = join(repo.root, "git_setup.json");
  const first = (await readCommandSetup(repo.root))!;
  // The first session began (and was killed: no `after`); its agent planted a hook meanwhile.
  await writeGitSetupRecord(record, { before: first });
  await Deno.writeTextFile(join(repo.root, ".git/hooks/post-checkout"), "#!/bin/sh\n");
  const end = await watchGitSetup(repo.root, record);
  const lines = await end();
  assert.match(lines[0], /git setup that runs commands changed during this run/);
  assert.equal(lines[1], "  new hook .git/hooks/post-checkout");
  assert.deepEqual(readGitSetupRecord(record)?.before, first);
  assert.ok(readGitSetupRecord(record)?.after?.hooks[".git/hooks/post-checkout"]);
});

Deno.test("a new run records the setup as it begins, and says nothing when the run changed none of it", async () => {
  await using repo = await tempRepo({ "README.md": "x\n" });
  const record = join(repo.root, "git_setup.json");
  await Deno.writeTextFile(join(repo.root, ".git/hooks/pre-push"), "#!/bin/sh\n"); // the user's own
  const end = await watchGitSetup(repo.root, record);
  assert.ok(readGitSetupRecord(record)?.before.hooks[".git/hooks/pre-push"]);
  assert.deepEqual(await end(), []);
});
