import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo, type TestRepo } from "./_test_repo.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { mergeAgentBranches } from "../merge/merge.ts";
import { changedEntries } from "../merge/merge_tree.ts";
import { linksOfCommit, listTreeLinks, noteTreeChange, treeListingCounts } from "./tree_links.ts";

/** The diff-tree of two commits' trees, as the merge train lists it. */
async function leafChanges(repo: TestRepo, from: string, to: string) {
  const tree = (c: string) => repo.git(["rev-parse", `${c}^{tree}`]);
  return (await changedEntries(repo.root, [[await tree(from), await tree(to)]]))[0];
}

const byPath = <T extends { path: string }>(xs: readonly T[]) =>
  [...xs].sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** A base with links in several shapes. */
async function linkedBase(repo: TestRepo): Promise<string> {
  await repo.write("conf/real.yaml", "x\n");
  await repo.write("dir/file.txt", "x\n");
  const links: Record<string, string> = {
    "service.yaml": "conf/real.yaml",
    "gone": "conf/real.yaml",
    "retarget": "conf/real.yaml",
    "becomes-dir": "conf",
    "becomes-file": "conf",
    "nested/link": "../conf",
  };
  for (const [path, target] of Object.entries(links)) {
    await Deno.mkdir(join(repo.root, path, ".."), { recursive: true });
    await Deno.symlink(target, join(repo.root, path));
  }
  return await repo.commitAll("base with links");
}

const CHANGES: [string, (root: string, repo: TestRepo) => Promise<void>][] = [
  ["a link removed, one retargeted, one become a directory, one a file", async (r, repo) => {
    await Deno.remove(join(r, "gone"));
    await Deno.remove(join(r, "retarget"));
    await Deno.symlink("dir/file.txt", join(r, "retarget"));
    await Deno.remove(join(r, "becomes-dir"));
    await repo.write("becomes-dir/inside.txt", "x\n");
    await Deno.remove(join(r, "becomes-file"));
    await repo.write("becomes-file", "now a file\n");
  }],
  ["a directory become a link, a new nested link", async (r) => {
    await Deno.remove(join(r, "dir"), { recursive: true });
    await Deno.symlink("conf", join(r, "dir"));
    await Deno.mkdir(join(r, "new/deep"), { recursive: true });
    await Deno.symlink("../../CODEOWNERS", join(r, "new/deep/owners"));
  }],
  ["a link's directory moved", async (r) => {
    await Deno.rename(join(r, "nested"), join(r, "moved"));
  }],
  ["no link touched", async (_r, repo) => {
    await repo.write("dir/file.txt", "y\n");
  }],
];

Deno.test("noteTreeChange() knows a commit's links from its parent's and the diff-tree between them, as ls-tree lists them (table)", async () => {
  await using repo = await tempRepo({ "unique.txt": crypto.randomUUID() }); // no commit seen before
  const base = await linkedBase(repo);
  await linksOfCommit(repo.root, base);
  for (const [i, [name, change]] of CHANGES.entries()) {
    await repo.git(["checkout", "-q", "-b", `c${i}`, base]);
    await change(repo.root, repo);
    const tip = await repo.commitAll(name);
    const entries = await leafChanges(repo, base, tip);
    const { listed, derived } = { ...treeListingCounts };
    noteTreeChange(base, tip, entries);
    const known = await linksOfCommit(repo.root, tip);
    assert.equal(treeListingCounts.listed, listed, `${name}: no ls-tree`);
    assert.equal(treeListingCounts.derived, derived + 1, name);
    assert.deepEqual(byPath(known), byPath(await listTreeLinks(repo.root, tip)), name);
  }
});

Deno.test("noteTreeChange() notes nothing when the parent's links are not known (they are listed when asked)", async () => {
  await using repo = await tempRepo({ "unique.txt": crypto.randomUUID() }); // no commit seen before
  const base = await linkedBase(repo);
  await Deno.remove(join(repo.root, "gone"));
  const tip = await repo.commitAll("one link fewer");
  const entries = await leafChanges(repo, base, tip);
  const { listed, derived } = { ...treeListingCounts };
  noteTreeChange(base, tip, entries);
  assert.equal(treeListingCounts.derived, derived);
  await linksOfCommit(repo.root, tip);
  assert.equal(treeListingCounts.listed, listed + 1);
});

Deno.test("a merge train's new target tip has its links known from the tip it was merged onto: no ls-tree for the tasks cut from it", async () => {
  await using repo = await tempRepo();
  const base = await linkedBase(repo);
  await linksOfCommit(repo.root, base);
  for (const [s, link] of [["s1", "one-link"], ["s2", "two-link"]]) {
    const wt = await createWorktree(repo.root, s, base);
    await Deno.symlink("conf/real.yaml", join(wt.path, link));
    await repo.commitAll(`work of ${s}`, wt.path);
  }
  const out = await mergeAgentBranches(repo.root, {
    target: "main",
    members: ["s1", "s2"].map((s) => ({ agent: `agent/${s}`, taskId: `t-${s}` })),
  });
  assert.deepEqual(out.map((o) => o.status), ["merged", "merged"]);
  const tip = await repo.git(["rev-parse", "main"]);
  const listed = treeListingCounts.listed;
  const known = await linksOfCommit(repo.root, tip);
  assert.equal(treeListingCounts.listed, listed, "no ls-tree of the new tip");
  assert.deepEqual(byPath(known), byPath(await listTreeLinks(repo.root, tip)));
  assert.ok(known.some((l) => l.path === "two-link"));
});
