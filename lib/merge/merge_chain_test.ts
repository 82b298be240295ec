import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { chainMerges, parseChain } from "./merge_chain.ts";

const TREE = "a".repeat(40);
const COMMIT = "b".repeat(40);

Deno.test("a chain's output is read up to the first line that is not a tree and a commit", () => {
  const cases: [string, string, number, number][] = [
    ["two merges", `${TREE} ${COMMIT}\n${TREE} ${COMMIT}\n`, 3, 2],
    ["nothing made", "", 3, 0],
    ["never more than asked", `${TREE} ${COMMIT}\n${TREE} ${COMMIT}\n`, 1, 1],
    ["a line cut short by a kill", `${TREE} ${COMMIT}\n${TREE} bbb`, 3, 1],
    ["a third field", `${TREE} ${COMMIT} extra\n`, 3, 0],
    ["not hex", `${"g".repeat(40)} ${COMMIT}\n`, 3, 0],
    ["a tree alone", `${TREE}\n`, 3, 0],
    ["upper case is not git's", `${TREE.toUpperCase()} ${COMMIT}\n`, 3, 0],
    ["SHA-256 object names", `${"c".repeat(64)} ${"d".repeat(64)}\n`, 3, 1],
    ["a blank line stops it", `\n${TREE} ${COMMIT}\n`, 3, 0],
  ];
  for (const [name, stdout, most, made] of cases) {
    assert.equal(parseChain(stdout, most).length, made, name);
  }
});

/** Commit dates fixed, so a merge commit made twice the same way has the same name. */
const FIXED = {
  GIT_AUTHOR_NAME: "service",
  GIT_AUTHOR_EMAIL: "service@localhost",
  GIT_COMMITTER_NAME: "service",
  GIT_COMMITTER_EMAIL: "service@localhost",
  GIT_AUTHOR_DATE: "1700000000 +0000",
  GIT_COMMITTER_DATE: "1700000000 +0000",
};

/** agent/<session> with `files` written on main's tip; returns its commit. */
async function agentWork(repo: TestRepo, session: string, files: Record<string, string>) {
  const wt = await createWorktree(repo.root, session, await repo.git(["rev-parse", "main"]));
  for (const [path, content] of Object.entries(files)) await repo.write(path, content, wt.path);
  return await repo.commitAll(`work of ${session}`, wt.path);
}

/** The same chain one git process at a time, as the train does it without the script. */
async function stepByStep(repo: TestRepo, links: { agent: string; message: string }[]) {
  let parent = await repo.git(["rev-parse", "main"]);
  const made: string[] = [];
  for (const { agent, message } of links) {
    const tree = await repo.git(["merge-tree", "--write-tree", parent, agent]);
    const cmd = new Deno.Command("git", {
      args: ["commit-tree", tree, "-p", parent, "-p", agent, "-m", message],
      cwd: repo.root,
      env: FIXED,
    });
    parent = new TextDecoder().decode((await cmd.output()).stdout).trim();
    made.push(parent);
  }
  return made;
}

const onto = async (repo: TestRepo) => ({
  commit: await repo.git(["rev-parse", "main"]),
  tree: await repo.git(["rev-parse", "main^{tree}"]),
});

Deno.test("a chain in one process makes byte for byte the merge commits the steps one at a time make", async () => {
  await using repo = await tempRepo({ "README.md": "readme\n" });
  const links = [];
  for (const s of ["s1", "s2", "s3"]) {
    links.push({ agent: await agentWork(repo, s, { [`${s}.txt`]: `${s}\n` }), message: `m ${s}` });
  }
  const chained = await chainMerges(repo.root, await onto(repo), links, { env: FIXED });
  assert.deepEqual(chained.map((c) => c.commit), await stepByStep(repo, links));
  for (const c of chained) {
    assert.equal(await repo.git(["rev-parse", `${c.commit}^{tree}`]), c.tree);
  }
  assert.equal(await repo.git(["rev-parse", "main"]), (await onto(repo)).commit, "no ref moved");
});

Deno.test("a chain stops at the first merge that is not plain, leaving it and the rest to the steps", async () => {
  await using repo = await tempRepo({ "shared.txt": "base\n" });
  const one = await agentWork(repo, "s1", { "shared.txt": "one\n" });
  const two = await agentWork(repo, "s2", { "shared.txt": "two\n" }); // conflicts with s1
  const three = await agentWork(repo, "s3", { "three.txt": "3\n" });
  const nothing = await repo.git(["rev-parse", "main"]); // merging it changes nothing
  const link = (agent: string) => ({ agent, message: "m" });
  const start = await onto(repo);
  const cases: [string, string[], number][] = [
    ["a conflict second", [one, two, three], 1],
    ["a conflict first", [two, one, three], 1],
    ["a merge that changes nothing", [one, nothing, three], 1],
    ["a commit that does not exist", [one, "f".repeat(40), three], 1],
    ["all plain", [one, three], 2],
  ];
  for (const [name, agents, made] of cases) {
    const chained = await chainMerges(repo.root, start, agents.map(link), { env: FIXED });
    assert.equal(chained.length, made, name);
  }
});

Deno.test("a merge message is the commit's message, never read by the shell", async () => {
  await using repo = await tempRepo({ "README.md": "readme\n" });
  const pwned = join(repo.root, "pwned");
  const messages = [
    `$(touch ${pwned})`,
    `\`touch ${pwned}\`; echo "quoted" 'single' \\ back`,
    "-m --amend\nsecond line\n\n  indented",
    "unicode: é — ✓ \u202e",
  ];
  const links = [];
  for (const [i, message] of messages.entries()) {
    links.push({ agent: await agentWork(repo, `s${i}`, { [`f${i}.txt`]: `${i}\n` }), message });
  }
  const chained = await chainMerges(repo.root, await onto(repo), links, { env: FIXED });
  assert.equal(chained.length, messages.length);
  for (const [i, c] of chained.entries()) {
    const body = await repo.git(["log", "-1", "--format=%B", c.commit]);
    assert.equal(body.trim(), messages[i].trim(), `message ${i}`);
  }
  assert.equal(await Deno.stat(pwned).catch(() => null), null, "nothing ran");
});

Deno.test("a chain of one, or an aborted one, is left to the steps", async () => {
  await using repo = await tempRepo({ "README.md": "readme\n" });
  const one = await agentWork(repo, "s1", { "one.txt": "1\n" });
  const two = await agentWork(repo, "s2", { "two.txt": "2\n" });
  const start = await onto(repo);
  assert.deepEqual(
    await chainMerges(repo.root, start, [{ agent: one, message: "m" }], { env: FIXED }),
    [],
  );
  const links = [{ agent: one, message: "m" }, { agent: two, message: "m" }];
  const signal = AbortSignal.abort();
  assert.deepEqual(await chainMerges(repo.root, start, links, { env: FIXED, signal }), []);
});
