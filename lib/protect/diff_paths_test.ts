import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { changedPaths, changesAndLinks, protectedLinks, treeListingCounts } from "./diff_paths.ts";
import { protectionRules } from "./rules.ts";

/** Every path protected: each link of a tree counts. */
const RULES = protectionRules({ user: ["**"] });

/** A base with links in several shapes, committed on main. */
async function linkedBase(repo: TestRepo): Promise<string> {
  await repo.write("conf/real.yaml", "x\n");
  await repo.write("dir/file.txt", "x\n");
  await repo.write("a-b", "x\n");
  for (
    const [path, target] of Object.entries({
      "service.yaml": "conf/real.yaml",
      "keep": "conf",
      "gone": "conf/real.yaml",
      "retarget": "conf/real.yaml",
      "becomes-dir": "conf",
      "becomes-file": "conf",
      "nested/link": "../conf",
    })
  ) {
    await Deno.mkdir(join(repo.root, path, ".."), { recursive: true });
    await Deno.symlink(target, join(repo.root, path));
  }
  return await repo.commitAll("base with links");
}

/** Changes made on a branch of the base, each a hostile shape for the derived listing. */
const CHANGES: [string, (repo: TestRepo) => Promise<void>][] = [
  ["a link removed, one retargeted, one replaced by a directory, one by a file", async (repo) => {
    await Deno.remove(join(repo.root, "gone"));
    await Deno.remove(join(repo.root, "retarget"));
    await Deno.symlink("dir/file.txt", join(repo.root, "retarget"));
    await Deno.remove(join(repo.root, "becomes-dir"));
    await repo.write("becomes-dir/inside.txt", "x\n");
    await Deno.remove(join(repo.root, "becomes-file"));
    await repo.write("becomes-file", "now a file\n");
  }],
  ["a directory replaced by a link, a file by a link, a new nested link", async (repo) => {
    await Deno.remove(join(repo.root, "dir"), { recursive: true });
    await Deno.symlink("conf", join(repo.root, "dir"));
    await Deno.remove(join(repo.root, "a-b"));
    await Deno.symlink("conf/real.yaml", join(repo.root, "a-b"));
    await Deno.mkdir(join(repo.root, "new/deep"), { recursive: true });
    await Deno.symlink("../../CODEOWNERS", join(repo.root, "new/deep/owners"));
  }],
  ["a link's directory moved (a rename, both sides)", async (repo) => {
    await Deno.rename(join(repo.root, "nested"), join(repo.root, "moved"));
  }],
  ["nothing changed but a file", async (repo) => {
    await repo.write("dir/file.txt", "y\n");
  }],
];

Deno.test("changesAndLinks() gives what changedPaths() and an ls-tree of the tip give, listing the base once for every tip cut from it (table)", async () => {
  await using repo = await tempRepo();
  const base = await linkedBase(repo);
  const listed = treeListingCounts.listed;
  for (const [i, [name, change]] of CHANGES.entries()) {
    await repo.git(["checkout", "-q", "-b", `c${i}`, base]);
    await change(repo);
    const tip = await repo.commitAll(name);
    const got = await changesAndLinks(repo.root, { base, tip, rules: RULES });
    const byPath = <T extends { path: string }>(xs: T[]) =>
      [...xs].sort((a, b) => a.path < b.path ? -1 : 1);
    assert.deepEqual(byPath(got.changes), byPath(await changedPaths(repo.root, base, tip)), name);
    assert.deepEqual(byPath(got.links), byPath(await protectedLinks(repo.root, tip, RULES)), name);
    assert.ok(got.links.length > 0, name);
  }
  assert.equal(treeListingCounts.listed, listed + 1, "one ls-tree for the four tips");
});

Deno.test("changesAndLinks() lists the tip itself when the base is a name, not a commit id (a name can move)", async () => {
  await using repo = await tempRepo();
  await linkedBase(repo);
  await repo.git(["branch", "base"]);
  await Deno.remove(join(repo.root, "gone"));
  const tip = await repo.commitAll("drop a link");
  const listed = treeListingCounts.listed;
  const got = await changesAndLinks(repo.root, { base: "base", tip, rules: RULES });
  assert.equal(treeListingCounts.listed, listed);
  assert.deepEqual(got.links, await protectedLinks(repo.root, tip, RULES));
  assert.ok(!got.links.some((l) => l.path === "gone"));
});
