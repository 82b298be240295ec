import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveCommit } from "./git.ts";
import {
  knownCommitCounts,
  knownToBeIn,
  noteCommit,
  targetTip,
  targetTipFromFiles,
} from "./known_commits.ts";
import { tempRepo, type TestRepo } from "./_test_repo.ts";

/** The tip `targetTip` gives, whether git was asked, and what git itself says. */
async function tipOf(repo: TestRepo, ref = "refs/heads/main") {
  const asked = knownCommitCounts.asked;
  const tip = await targetTip(repo.root, ref);
  const git = await resolveCommit(ref, { cwd: repo.root });
  return { tip, asked: knownCommitCounts.asked > asked, git };
}

Deno.test("targetTip() reads the target from its ref file once git named its commit, and asks git again when the target moves to a commit it never named", async () => {
  await using repo = await tempRepo();
  const first = await tipOf(repo);
  assert.deepEqual(first, { tip: first.git, asked: true, git: first.git });
  assert.deepEqual(await tipOf(repo), { tip: first.git, asked: false, git: first.git });

  await repo.write("b.txt", "b\n");
  const moved = await repo.commitAll("the user's commit");
  assert.deepEqual(await tipOf(repo), { tip: moved, asked: true, git: moved });
  assert.deepEqual(await tipOf(repo), { tip: moved, asked: false, git: moved });
  // Moved back to a commit git named before: the file answers, and says what git says.
  await repo.git(["update-ref", "refs/heads/main", first.git!]);
  assert.deepEqual(await tipOf(repo), { tip: first.git, asked: false, git: first.git });
});

Deno.test("targetTip() asks git whenever the files do not answer plainly: a packed ref, a tag, a symbolic ref into a packed one, a link, a reftable, a junk line, a linked checkout (table)", async () => {
  const cases: [string, (repo: TestRepo) => Promise<string | void>][] = [
    ["a packed ref (no loose file)", async (repo) => {
      await repo.git(["pack-refs", "--all", "--prune"]);
    }],
    ["a ref holding an annotated tag (git peels it)", async (repo) => {
      await repo.git(["tag", "-a", "-m", "t", "v1", "main"]);
      const tagId = await repo.git(["rev-parse", "refs/tags/v1"]);
      await Deno.writeTextFile(join(repo.root, ".git/refs/heads/main"), `${tagId}\n`);
    }],
    ["a symbolic ref to a packed branch", async (repo) => {
      await repo.git(["branch", "other"]);
      await repo.git(["pack-refs", "--all", "--prune"]);
      await repo.git(["symbolic-ref", "refs/heads/main", "refs/heads/other"]);
    }],
    ["a symbolic link as the ref file", async (repo) => {
      const file = join(repo.root, ".git/refs/heads/main");
      const id = (await Deno.readTextFile(file)).trim();
      await Deno.writeTextFile(join(repo.root, ".git/elsewhere"), `${id}\n`);
      await Deno.remove(file);
      await Deno.symlink(join(repo.root, ".git/elsewhere"), file);
    }],
    ["a reftable directory beside the refs", async (repo) => {
      await Deno.mkdir(join(repo.root, ".git/reftable"));
    }],
    ["a ref file with more than the id in it", async (repo) => {
      const file = join(repo.root, ".git/refs/heads/main");
      await Deno.writeTextFile(file, (await Deno.readTextFile(file)) + "junk\n");
    }],
  ];
  for (const [name, spoil] of cases) {
    await using repo = await tempRepo();
    const tip = await repo.git(["rev-parse", "main"]);
    noteCommit(repo.root, tip); // known: only the files' plainness is in question
    await spoil(repo);
    const got = await tipOf(repo);
    assert.equal(got.asked, true, name);
    assert.equal(got.tip, got.git, name);
  }
  // A linked checkout's `.git` is a file naming its git directory elsewhere.
  await using repo = await tempRepo();
  const linked = join(repo.root, "linked");
  await repo.git(["worktree", "add", "-q", "-b", "b", linked, "main"]);
  noteCommit(linked, await repo.git(["rev-parse", "main"]));
  const asked = knownCommitCounts.asked;
  assert.equal(await targetTip(linked, "refs/heads/main"), await repo.git(["rev-parse", "main"]));
  assert.equal(knownCommitCounts.asked, asked + 1);
});

Deno.test("targetTip() follows a symbolic target ref within the git directory, and knows commits per repository", async () => {
  await using repo = await tempRepo();
  await repo.git(["branch", "other"]);
  await repo.git(["symbolic-ref", "refs/heads/main", "refs/heads/other"]);
  const first = await tipOf(repo);
  assert.equal(first.asked, true);
  assert.deepEqual(await tipOf(repo), { tip: first.git, asked: false, git: first.git });

  // The same commit id in another repository's file is not taken on this one's word.
  await using copy = await tempRepo();
  await Deno.writeTextFile(join(copy.root, ".git/refs/heads/main"), `${first.git}\n`);
  assert.equal(await targetTipFromFiles(copy.root, "refs/heads/main"), undefined);
});

Deno.test("knownToBeIn() holds only for a target whose tip, read from its file, is the commit or a known merge that contains it", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  await repo.git(["checkout", "-q", "-b", "work"]);
  await repo.write("a.txt", "a\n");
  const agent = await repo.commitAll("agent work");
  await repo.git(["checkout", "-q", "main"]);
  const tree = await repo.git(["rev-parse", `${agent}^{tree}`]);
  const merge = await repo.git(["commit-tree", tree, "-p", base, "-p", agent, "-m", "merge"]);
  noteCommit(repo.root, merge, [base, agent]);
  const ref = "refs/heads/main";

  assert.equal(await knownToBeIn(repo.root, ref, agent), false, "main is still at its base");
  await repo.git(["update-ref", ref, merge]);
  assert.equal(await knownToBeIn(repo.root, ref, agent), true);
  assert.equal(await knownToBeIn(repo.root, ref, merge), true);
  assert.equal(await knownToBeIn(repo.root, ref, base), true);
  // A second merge on top holds what the first held.
  const later = await repo.git(["commit-tree", tree, "-p", merge, "-m", "later"]);
  noteCommit(repo.root, later, [merge]);
  await repo.git(["update-ref", ref, later]);
  assert.equal(await knownToBeIn(repo.root, ref, agent), true);
  // A commit nobody named, on top: not known (git is asked), though it does contain the work.
  await repo.git(["reset", "-q", "--hard", later]);
  await repo.write("c.txt", "c\n");
  await repo.commitAll("the user's commit");
  assert.equal(await knownToBeIn(repo.root, ref, agent), false);
  // The target moved back before the merge: not contained, and not claimed.
  await repo.git(["update-ref", ref, base]);
  noteCommit(repo.root, base);
  assert.equal(await knownToBeIn(repo.root, ref, agent), false);
  // Packed: the file does not answer.
  await repo.git(["update-ref", ref, merge]);
  await repo.git(["pack-refs", "--all", "--prune"]);
  assert.equal(await knownToBeIn(repo.root, ref, agent), false);
});
