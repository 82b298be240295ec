import assert from "node:assert/strict";
import { join } from "node:path";
import { askConfig, RACY_MS } from "./remembered_config.ts";
import { tempRepo } from "./_test_repo.ts";

Deno.test("askConfig() keeps one answer per question: another key asked in the same place is asked of git, and each is then answered from memory", async () => {
  await using repo = await tempRepo();
  const home = join(repo.root, ".git", "home");
  await Deno.mkdir(home);
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
  await repo.git(["config", "core.excludesFile", "/x/ignore"]);
  await new Promise((r) => setTimeout(r, RACY_MS + 200));
  const counts = { asked: 0, remembered: 0 };
  const question = (key: string) => ({ args: ["--get", key], mentions: /core/i, counts });
  const excludes = question("core.excludesFile");
  const name = question("user.name");
  for (let i = 0; i < 2; i++) {
    assert.deepEqual((await askConfig(repo.root, excludes, { env })).values, ["/x/ignore"]);
    assert.deepEqual((await askConfig(repo.root, name, { env })).values, ["Test User"]);
  }
  assert.deepEqual(counts, { asked: 2, remembered: 2 });
  // Not set: an empty answer (git's exit code 1), kept as well.
  const none = question("core.nothingHere");
  assert.deepEqual(await askConfig(repo.root, none, { env }), { origins: [], values: [] });
  assert.deepEqual(await askConfig(repo.root, none, { env }), { origins: [], values: [] });
  assert.deepEqual(counts, { asked: 3, remembered: 3 });
});
