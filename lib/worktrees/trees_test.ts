import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "../git/_test_repo.ts";
import { gitText } from "../git/git.ts";
import { createWorktree } from "./worktrees.ts";
import { DEFAULT_IGNORES, writeWorktreeIgnores } from "./ignores.ts";
import {
  openWorktree,
  sealWorktree,
  settleWorktree,
  treeRecordOf,
  treeRecordPath,
} from "./trees.ts";

const HOSTILE = new URL("../../tests/_hostile_git.ts", import.meta.url).pathname;

/** Play one trick of tests/_hostile_git.ts in `worktree`, as a host-process agent would. */
async function play(worktree: string, trick: string, bait: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", HOSTILE, trick, JSON.stringify({ sentinel: "/nonexistent", ...bait })],
    cwd: worktree,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

Deno.test("sealWorktree() keeps the worktree's git files as the service made them; openWorktree() puts back what an agent changed, and says so", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-1", "main");
  await writeWorktreeIgnores(wt.path, DEFAULT_IGNORES);
  const sealed = await sealWorktree(repo.root, "s-1");
  assert.deepEqual(Object.keys(sealed.files).sort(), ["config.worktree", "service-exclude"]);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(treeRecordPath(repo.root, "s-1"))), sealed);
  await play(wt.path, "commondir", {});
  await Deno.writeTextFile(join(sealed.admin_dir, "service-exclude"), "");
  await assert.rejects(
    () => openWorktree(wt.path, { repair: false }),
    /commondir changed; service-exclude changed/,
  );
  const warned: string[] = [];
  const tree = await openWorktree(wt.path, { warn: (l) => warned.push(l) });
  assert.match(warned.join("\n"), /put back \(commondir changed; service-exclude changed\)/);
  assert.equal(
    await Deno.readTextFile(join(sealed.admin_dir, "service-exclude")),
    sealed.files["service-exclude"],
  );
  await repo.write("work.txt", "work\n", wt.path);
  await tree.git(["add", "-A"]);
  await tree.git(["commit", "-q", "--no-verify", "-m", "work"]);
  assert.equal(await repo.git(["show", "agent/s-1:work.txt"]), "work");
});

Deno.test("settleWorktree(): the commit a host agent's HEAD names becomes its branch's; a HEAD linked to main writes nothing there", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-1", "main");
  const sealed = await sealWorktree(repo.root, "s-1");
  // The agent commits on a detached HEAD.
  await repo.write("work.txt", "work\n", wt.path);
  await repo.git(["checkout", "-q", "--detach"], wt.path);
  const tip = await repo.commitAll("detached work", wt.path);
  const settled = await settleWorktree(repo.root, "s-1");
  assert.equal(settled.tip, tip);
  assert.equal(await repo.git(["rev-parse", "agent/s-1"]), tip);
  assert.equal(await repo.git(["symbolic-ref", "HEAD"], wt.path), "refs/heads/agent/s-1");
  // HEAD as a link to main's ref file.
  const main = await repo.git(["rev-parse", "main"]);
  await play(wt.path, "head-symlink", {});
  const again = await settleWorktree(repo.root, "s-1");
  assert.match(again.repaired.join("; "), /HEAD changed/);
  assert.equal(again.tip, undefined, "a link is not followed");
  assert.equal(await repo.git(["rev-parse", "main"]), main);
  assert.equal(
    (await Deno.readTextFile(join(sealed.common_dir, "refs/heads/main"))).trim(),
    main,
    "main's ref file is still a commit id",
  );
});

Deno.test("settleWorktree() rebuilds the index: an entry naming a host file is gone before the service stages anything", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-1", "main");
  await sealWorktree(repo.root, "s-1");
  const victim = join(repo.root, "..", `secret-${crypto.randomUUID()}`);
  await Deno.writeTextFile(victim, "TOP SECRET\n");
  try {
    await play(wt.path, "index", { victim });
    await settleWorktree(repo.root, "s-1");
    const tree = await openWorktree(wt.path);
    await tree.git(["add", "-A"]);
    assert.doesNotMatch(await tree.text(["ls-files"]), /secret-/);
  } finally {
    await Deno.remove(victim).catch(() => {});
  }
});

Deno.test("treeRecordOf() without a seal: the service's directories and branch, its excludes kept and its config.worktree as the service writes it", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-2", "main");
  await writeWorktreeIgnores(wt.path, DEFAULT_IGNORES);
  const admin = join(repo.root, ".git/worktrees/s-2");
  await Deno.writeTextFile(join(admin, "config.worktree"), "[core]\n\tfsmonitor = /tmp/x\n");
  const record = await treeRecordOf(wt.path);
  assert.equal(record.head, "ref: refs/heads/agent/s-2");
  assert.equal(record.admin_dir, admin);
  assert.equal(
    record.files["config.worktree"],
    `[core]\n\texcludesFile = ${join(admin, "service-exclude")}\n`,
  );
  await openWorktree(wt.path);
  assert.doesNotMatch(await Deno.readTextFile(join(admin, "config.worktree")), /fsmonitor/);
});

Deno.test("settleWorktree() after a host agent deleted its own branch: the commit its HEAD names makes it again; the index is rebuilt from it", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-1", "main");
  await sealWorktree(repo.root, "s-1");
  await repo.write("work.txt", "work\n", wt.path);
  await repo.git(["checkout", "-q", "--detach"], wt.path);
  const tip = await repo.commitAll("work", wt.path);
  await repo.git(["update-ref", "-d", "refs/heads/agent/s-1"]);
  const settled = await settleWorktree(repo.root, "s-1");
  assert.equal(settled.tip, tip);
  const tree = await openWorktree(wt.path);
  assert.equal(await tree.text(["status", "--porcelain"]), "");
});

Deno.test("settleWorktree() with the branch gone and HEAD unusable: an empty index, and the next git add -A takes the whole worktree", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-1", "main");
  const sealed = await sealWorktree(repo.root, "s-1");
  await repo.git(["update-ref", "-d", "refs/heads/agent/s-1"]);
  await Deno.writeTextFile(join(sealed.admin_dir, "HEAD"), "garbage\n");
  await settleWorktree(repo.root, "s-1");
  const tree = await openWorktree(wt.path);
  await tree.git(["add", "-A"]);
  assert.match(await tree.text(["ls-files"]), /README\.md/);
});

Deno.test("settleWorktree() keeps an index no one touched since the seal, stat information and all (the next git add -A reads no file again)", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-1", "main");
  const sealed = await sealWorktree(repo.root, "s-1");
  const before = await Deno.readFile(join(sealed.admin_dir, "index"));
  await repo.write("work.txt", "work\n", wt.path); // work, but no git
  const settled = await settleWorktree(repo.root, "s-1");
  assert.deepEqual(settled.repaired, []);
  assert.deepEqual(await Deno.readFile(join(sealed.admin_dir, "index")), before);
  const tree = await openWorktree(wt.path);
  assert.equal(await tree.text(["status", "--porcelain"]), "?? work.txt");
});

Deno.test("settleWorktree() rebuilds an untouched index when the agent moved its branch without it: the index is the new tip's", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-1", "main");
  const sealed = await sealWorktree(repo.root, "s-1");
  const before = await Deno.readFile(join(sealed.admin_dir, "index"));
  // A commit made with plumbing only: the index file is not written.
  const blob = await gitText(["hash-object", "-w", "--stdin"], { cwd: wt.path, stdin: "work\n" });
  const tree = await gitText(["mktree"], {
    cwd: wt.path,
    stdin: `100644 blob ${blob}\tREADME.md\n100644 blob ${blob}\twork.txt\n`,
  });
  const tip = await repo.git(["commit-tree", tree, "-p", "HEAD", "-m", "plumbing"], wt.path);
  await repo.git(["update-ref", "refs/heads/agent/s-1", tip], wt.path);
  await repo.write("work.txt", "work\n", wt.path);
  await repo.write("README.md", "work\n", wt.path);
  assert.deepEqual(await Deno.readFile(join(sealed.admin_dir, "index")), before);
  await settleWorktree(repo.root, "s-1");
  const opened = await openWorktree(wt.path);
  assert.equal(await opened.text(["status", "--porcelain"]), "", "the index is the tip's tree");
});

Deno.test("settleWorktree() rebuilds an index the agent rewrote: a skip-worktree bit it set hides no change from the service's git add -A", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-1", "main");
  await sealWorktree(repo.root, "s-1");
  await repo.git(["update-index", "--skip-worktree", "README.md"], wt.path);
  await repo.write("README.md", "changed\n", wt.path);
  await settleWorktree(repo.root, "s-1");
  const tree = await openWorktree(wt.path);
  await tree.git(["add", "-A"]);
  assert.equal(await tree.text(["diff", "--cached", "--name-only"]), "README.md");
});

Deno.test("a worktree of a repository whose path holds quotes, `#` and `;`: its config.worktree is what the record expects, so nothing is put back", async () => {
  const parent = await Deno.realPath(await Deno.makeTempDir({ prefix: "svc-odd-" }));
  try {
    const root = join(parent, 'a "quoted" #dir; ');
    await Deno.mkdir(root);
    const o = { cwd: root };
    await gitText(["init", "-q", "-b", "main"], o);
    await Deno.writeTextFile(join(root, "README.md"), "hi\n");
    await gitText(["add", "-A"], o);
    await gitText(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], o);
    const wt = await createWorktree(root, "s-1", "main");
    await writeWorktreeIgnores(wt.path, DEFAULT_IGNORES);
    const tree = await openWorktree(wt.path, { repair: false }); // unsealed: a derived record
    await Deno.writeTextFile(join(wt.path, "x.pyc"), "junk");
    await Deno.writeTextFile(join(wt.path, "work.txt"), "work\n");
    assert.equal(await tree.text(["status", "--porcelain"]), "?? work.txt", "the excludes apply");
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
