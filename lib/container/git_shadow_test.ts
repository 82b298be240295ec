import assert from "node:assert/strict";
import { join } from "node:path";
import { prepareGitShadow } from "./git_shadow.ts";
import { recordTreeAdmin } from "../git/tree_admin.ts";
import { tempDir } from "../../tests/helpers.ts";

async function git(cwd: string, ...args: string[]): Promise<void> {
  const r = await new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" }).output();
  assert.ok(r.success, new TextDecoder().decode(r.stderr));
}

Deno.test("prepareGitShadow() copies the refs as they are, never a ref's lock file another writer holds", async () => {
  await using repo = await tempDir();
  const root = repo.path;
  await git(root, "init", "-q", "-b", "main");
  await git(
    root,
    "-c",
    "user.email=a@b",
    "-c",
    "user.name=a",
    "commit",
    "-q",
    "--allow-empty",
    "-m",
    "i",
  );
  await git(root, "worktree", "add", "-q", "-b", "agent/s-1", join(root, "wt"));
  await git(root, "branch", "agent/s-0");
  // Another session's merge is deleting its branch right now: git holds `<ref>.lock`.
  await Deno.writeTextFile(join(root, ".git/refs/heads/agent/s-0.lock"), "");
  const shadow = await prepareGitShadow({
    dir: join(root, "box"),
    sessionId: "s-1",
    admin: await recordTreeAdmin(
      await Deno.realPath(join(root, "wt")),
      await Deno.realPath(join(root, ".git")),
    ),
    branch: "agent/s-1",
  });
  const heads = join(shadow.dir, "git", "refs", "heads");
  const names = (await Array.fromAsync(Deno.readDir(join(heads, "agent")))).map((e) => e.name);
  assert.deepEqual(names.sort(), ["s-0", "s-1"]);
  assert.ok(await Deno.stat(join(heads, "main")));
});
