import assert from "node:assert/strict";
import { delimiter, join } from "node:path";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { git } from "../git/git.ts";
import { recordTreeAdmin } from "../git/tree_admin.ts";
import { createWorktree, WorktreeError, worktreePath } from "./worktrees.ts";
import {
  ABANDONED_MS,
  HALF_MADE_REASON,
  lockedText,
  makerGone,
  parseLockedText,
  sweepHalfMade,
} from "./one_process_add.ts";

/**
 * The git processes `work` starts in the repository at `root` (any of its worktrees), by command
 * name, from git's own trace, after `warmUp` ran under the same trace: git's environment is part
 * of what the service remembers of its configuration. The trace is the process's environment,
 * which test files run side by side share: only processes that set up a repository under `root`
 * count.
 */
async function gitProcesses(
  root: string,
  warmUp: () => Promise<unknown>,
  work: () => Promise<unknown>,
): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "svc-trace-" });
  const path = join(dir, "trace.jsonl");
  const events = async () =>
    (await Deno.readTextFile(path).catch(() => "")).split("\n").filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, string>);
  const names = (all: Record<string, string>[]) => {
    const ours = new Set(
      all.filter((e) => e.event === "def_repo" && e.worktree?.startsWith(root)).map((e) => e.sid),
    );
    return all.filter((e) => e.event === "cmd_name" && ours.has(e.sid)).map((e) => e.name);
  };
  Deno.env.set("GIT_TRACE2_EVENT", path);
  try {
    await warmUp();
    const before = (await events()).length;
    await work();
    return names((await events()).slice(before));
  } finally {
    Deno.env.delete("GIT_TRACE2_EVENT");
    await Deno.remove(dir, { recursive: true });
  }
}

/** `git worktree list --porcelain` of the repository, as records keyed by their worktree. */
async function listed(repo: TestRepo): Promise<Map<string, string[]>> {
  const out = await repo.git(["worktree", "list", "--porcelain"]);
  const records = new Map<string, string[]>();
  for (const block of out.split("\n\n")) {
    const lines = block.split("\n").filter((l) => l !== "");
    if (lines.length === 0) continue;
    records.set(lines[0].slice("worktree ".length), lines.slice(1));
  }
  return records;
}

/** A repository of a few files in two directories, and its commit. */
async function repoWithFiles(): Promise<{ repo: TestRepo; base: string }> {
  const repo = await tempRepo({ "a/one.txt": "1\n", "a/b/two.txt": "2\n", "three.txt": "3\n" });
  return { repo, base: await repo.git(["rev-parse", "main"]) };
}

Deno.test("createWorktree() starts one git process, and git's own worktree list, lock, unlock, repair, remove and prune take what it made for a worktree git made", async () => {
  const { repo, base } = await repoWithFiles();
  await using _ = repo;
  let wt!: Awaited<ReturnType<typeof createWorktree>>;
  // The first of a process and repository also lists the config's drivers and excludes.
  const warmUp = () => createWorktree(repo.root, "warm-up", base);
  const started = await gitProcesses(repo.root, warmUp, async () => {
    wt = await createWorktree(repo.root, "s-1", base);
  });
  assert.deepEqual(started, ["checkout"]);
  assert.equal(await repo.git(["rev-parse", "HEAD"], wt.path), base);
  assert.equal(await repo.git(["symbolic-ref", "HEAD"], wt.path), "refs/heads/agent/s-1");
  assert.equal(await repo.git(["status", "--porcelain", "--untracked-files=all"], wt.path), "");
  assert.equal(await repo.read("a/b/two.txt", wt.path), "2\n");
  assert.deepEqual((await listed(repo)).get(wt.path), [
    `HEAD ${base}`,
    "branch refs/heads/agent/s-1",
  ]);
  // The service's own record of a worktree's git files takes it as it takes git's.
  const commonDir = join(repo.root, ".git");
  const record = await recordTreeAdmin(wt.path, commonDir);
  assert.equal(record.head, "ref: refs/heads/agent/s-1");
  assert.equal(await repo.git(["worktree", "repair"]), "");
  await repo.git(["worktree", "lock", "--reason", "held", wt.path]);
  assert.deepEqual((await listed(repo)).get(wt.path)?.at(-1), "locked held");
  await repo.git(["worktree", "unlock", wt.path]);
  await repo.git(["worktree", "prune"]);
  assert.ok((await listed(repo)).has(wt.path), "prune keeps a worktree that is there");
  await repo.git(["worktree", "remove", wt.path]);
  assert.ok(!(await listed(repo)).has(wt.path));
  assert.equal(await repo.git(["rev-parse", "agent/s-1"]), base, "the branch outlives its tree");
});

Deno.test("createWorktree() never moves an existing agent branch: one with commits of its own is refused, one at the base is checked out", async () => {
  const { repo, base } = await repoWithFiles();
  await using _ = repo;
  await repo.write("later.txt", "later\n");
  const later = await repo.commitAll("later");
  await repo.git(["branch", "agent/s-held", later]);
  await assert.rejects(() => createWorktree(repo.root, "s-held", base), (e: unknown) => {
    assert.ok(e instanceof WorktreeError);
    assert.match(e.message, /a branch named 'agent\/s-held' already exists/);
    assert.match(e.fix, /refs\/service\/rescue\/s-held/);
    return true;
  });
  assert.equal(await repo.git(["rev-parse", "agent/s-held"]), later);
  assert.ok(!(await listed(repo)).has(worktreePath(repo.root, "s-held")), "nothing left behind");
  await repo.git(["branch", "agent/s-idle", base]);
  const idle = await createWorktree(repo.root, "s-idle", base);
  assert.equal(await repo.git(["rev-parse", "HEAD"], idle.path), base);
  assert.equal(await repo.git(["symbolic-ref", "HEAD"], idle.path), "refs/heads/agent/s-idle");
});

Deno.test("createWorktree() runs no hook and no filter the repository's configuration or the tree's attributes name", async () => {
  const { repo, base: _ } = await repoWithFiles();
  await using __ = repo;
  const ran = join(repo.root, "..", `ran-${crypto.randomUUID()}`);
  const script = `#!/bin/sh\necho "$0" >> ${ran}\n`;
  await repo.write(".gitattributes", "* filter=evil\n");
  const base = await repo.commitAll("attributes");
  await repo.git(["config", "filter.evil.smudge", `sh -c 'echo smudge >> ${ran}; cat'`]);
  await repo.git(["config", "filter.evil.required", "true"]);
  const hooks = join(repo.root, "hooks-here");
  await Deno.mkdir(hooks);
  for (const dir of [hooks, join(repo.root, ".git", "hooks")]) {
    for (const hook of ["post-checkout", "reference-transaction", "post-index-change"]) {
      await Deno.writeTextFile(join(dir, hook), script, { mode: 0o755 });
    }
  }
  await repo.git(["config", "core.hooksPath", hooks]);
  const wt = await createWorktree(repo.root, "s-hostile", base);
  assert.equal(await repo.read("three.txt", wt.path), "3\n");
  await assert.rejects(() => Deno.stat(ran), Deno.errors.NotFound, "nothing ran");
});

Deno.test("createWorktree() leaves a checkout with a config.worktree or a sparse-checkout to git worktree add, which copies them", async () => {
  const { repo, base } = await repoWithFiles();
  await using _ = repo;
  await repo.git(["config", "extensions.worktreeConfig", "true"]);
  await repo.git(["config", "--worktree", "user.name", "main's own"]);
  const started = await gitProcesses(
    repo.root,
    () => createWorktree(repo.root, "warm-up", base),
    () => createWorktree(repo.root, "s-copied", base),
  );
  assert.ok(started.includes("worktree"), started.join(" "));
  const copied = join(repo.root, ".git", "worktrees", "s-copied", "config.worktree");
  assert.match(await Deno.readTextFile(copied), /main's own/);

  const sparse = await repoWithFiles();
  await using __ = sparse.repo;
  await sparse.repo.git(["config", "core.sparseCheckout", "true"]);
  await sparse.repo.write(".git/info/sparse-checkout", "/three.txt\n");
  const wt = await createWorktree(sparse.repo.root, "s-sparse", sparse.base);
  const patterns = join(
    sparse.repo.root,
    ".git",
    "worktrees",
    "s-sparse",
    "info",
    "sparse-checkout",
  );
  assert.equal(await Deno.readTextFile(patterns), "/three.txt\n");
  assert.equal(await sparse.repo.read("three.txt", wt.path), "3\n");
  await assert.rejects(() => Deno.lstat(join(wt.path, "a")), Deno.errors.NotFound);
});

Deno.test("16 createWorktree() calls at once in one repository each get their tree, while git prunes and lists beside them", async () => {
  const { repo, base } = await repoWithFiles();
  await using _ = repo;
  let making = true;
  const beside = (async () => {
    let rounds = 0;
    while (making || rounds === 0) {
      rounds++;
      await git(["worktree", "prune"], { cwd: repo.root });
      await git(["worktree", "list", "--porcelain"], { cwd: repo.root });
    }
    return rounds;
  })();
  const ids = Array.from({ length: 16 }, (_, i) => `s-at-once-${i}`);
  const made = await Promise.all(ids.map((id) => createWorktree(repo.root, id, base)))
    .finally(() => making = false);
  assert.ok(await beside > 0);
  const list = await listed(repo);
  for (const wt of made) {
    assert.deepEqual(list.get(wt.path), [`HEAD ${base}`, `branch refs/heads/${wt.branch}`]);
    assert.equal(await repo.git(["status", "--porcelain"], wt.path), "");
  }
});

/** A Deno script that makes worktrees of a repository: `root base id…`, all at once. */
const MAKER = `
import { createWorktree } from ${JSON.stringify(new URL("./worktrees.ts", import.meta.url).href)};
const [root, base, ...ids] = Deno.args;
await Promise.all(ids.map((id) => createWorktree(root, id, base)));
`;

/** Where the real git is (the stand-in of a crash test runs it). */
function realGit(): string {
  for (const dir of (Deno.env.get("PATH") ?? "").split(delimiter)) {
    try {
      if (Deno.statSync(join(dir, "git")).isFile) return join(dir, "git");
    } catch { /* not here */ }
  }
  throw new Error("no git on PATH");
}

Deno.test("two service processes making 8 worktrees each in one repository at once both succeed", async () => {
  const { repo, base } = await repoWithFiles();
  await using _ = repo;
  const script = join(repo.root, "..", `maker-${crypto.randomUUID()}.ts`);
  await Deno.writeTextFile(script, MAKER);
  try {
    const run = (who: string) =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          script,
          repo.root,
          base,
          ...Array.from({ length: 8 }, (_, i) => `s-${who}-${i}`),
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
    const [a, b] = await Promise.all([run("a"), run("b")]);
    assert.ok(a.success, new TextDecoder().decode(a.stderr));
    assert.ok(b.success, new TextDecoder().decode(b.stderr));
  } finally {
    await Deno.remove(script);
  }
  const list = await listed(repo);
  for (const who of ["a", "b"]) {
    for (let i = 0; i < 8; i++) {
      const path = worktreePath(repo.root, `s-${who}-${i}`);
      assert.deepEqual(list.get(path), [`HEAD ${base}`, `branch refs/heads/agent/s-${who}-${i}`]);
    }
  }
});

/**
 * Start a service process making worktree `id` with a stand-in git that stops at the checkout
 * (before it, or after it when `after`), and kill it there as `kill -9` would.
 */
async function killedWhileMaking(repo: TestRepo, base: string, id: string, after: boolean) {
  const dir = await Deno.makeTempDir({ prefix: "svc-killed-" });
  const mark = join(dir, "stopped");
  const checkout = after ? `"${realGit()}" "$@" || exit 1; ` : "";
  await Deno.writeTextFile(
    join(dir, "git"),
    `#!/bin/sh\ncase " $* " in *" checkout "*) ${checkout}echo $$ > "${mark}.tmp"; ` +
      `mv "${mark}.tmp" "${mark}"; exec sleep 600;; esac\nexec "${realGit()}" "$@"\n`,
    { mode: 0o755 },
  );
  await Deno.writeTextFile(join(dir, "maker.ts"), MAKER);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(dir, "maker.ts"), repo.root, base, id],
    env: { PATH: `${dir}${delimiter}${Deno.env.get("PATH")}` },
    stdout: "null",
    stderr: "null",
  }).spawn();
  let ended = false;
  const status = child.status.finally(() => ended = true);
  let standIn: number | undefined;
  while (standIn === undefined) {
    const text = await Deno.readTextFile(mark).catch(() => "");
    if (text.trim()) standIn = Number(text.trim());
    else if (ended) throw new Error(`the maker ended (${(await status).code}) before a checkout`);
    else await new Promise((r) => setTimeout(r, 20));
  }
  child.kill("SIGKILL");
  await status;
  Deno.kill(standIn, "SIGKILL");
  await Deno.remove(dir, { recursive: true });
}

Deno.test("a service killed before its checkout leaves a locked entry git's prune keeps; the next process's first createWorktree removes it", async () => {
  const { repo, base } = await repoWithFiles();
  await using _ = repo;
  await killedWhileMaking(repo, base, "s-killed", false);
  const path = worktreePath(repo.root, "s-killed");
  const admin = join(repo.root, ".git", "worktrees", "s-killed");
  assert.ok(
    (await Deno.readTextFile(join(admin, "locked"))).startsWith(HALF_MADE_REASON),
  );
  await repo.git(["worktree", "prune"]);
  assert.ok((await listed(repo)).get(path)?.some((l) => l.startsWith("locked")));
  const next = await createWorktree(repo.root, "s-next", base);
  assert.ok(!(await listed(repo)).has(path), "the half-made entry is gone");
  await assert.rejects(() => Deno.lstat(admin), Deno.errors.NotFound);
  await assert.rejects(() => Deno.lstat(path), Deno.errors.NotFound);
  assert.equal(await repo.git(["status", "--porcelain"], next.path), "");
  const again = await createWorktree(repo.root, "s-killed", base);
  assert.equal(await repo.git(["rev-parse", "HEAD"], again.path), base);
});

Deno.test("a service killed after its checkout leaves a locked worktree; the next process's sweep only unlocks it", async () => {
  const { repo, base } = await repoWithFiles();
  await using _ = repo;
  await killedWhileMaking(repo, base, "s-late", true);
  const path = worktreePath(repo.root, "s-late");
  assert.equal(await repo.git(["rev-parse", "agent/s-late"]), base);
  const swept = await sweepHalfMade(repo.root, {
    worktrees: join(repo.root, ".sdd", "worktrees"),
    sealed: () => false,
  });
  assert.deepEqual(swept, { removed: [], unlocked: ["s-late"] });
  assert.deepEqual((await listed(repo)).get(path), [
    `HEAD ${base}`,
    "branch refs/heads/agent/s-late",
  ]);
  assert.equal(await repo.git(["status", "--porcelain"], path), "");
});

Deno.test("sweepHalfMade() leaves the half-made entries of a live process and entries locked by anyone else", async () => {
  const { repo, base } = await repoWithFiles();
  await using _ = repo;
  await repo.git([
    "worktree",
    "add",
    "-q",
    "--lock",
    "-b",
    "agent/s-user",
    join(repo.root, "u"),
    base,
  ]);
  const admin = join(repo.root, ".git", "worktrees", "s-live");
  await Deno.mkdir(admin, { recursive: true });
  await Deno.writeTextFile(join(admin, "locked"), lockedText({ pid: Deno.pid }));
  const swept = await sweepHalfMade(repo.root, {
    worktrees: join(repo.root, ".sdd", "worktrees"),
    sealed: () => false,
  });
  assert.deepEqual(swept, { removed: [], unlocked: [] });
  assert.ok((await Deno.lstat(admin)).isDirectory);
});

Deno.test("makerGone() judges a locked text's maker: dead, reused pid, or another namespace's after ABANDONED_MS", () => {
  const self = parseLockedText(
    lockedText({
      pid: Deno.pid,
      start: Number(Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ")[19]),
      ns: /\d+/.exec(Deno.readLinkSync("/proc/self/ns/pid"))![0],
    }),
  )!;
  const now = Date.now();
  const cases: [string, Parameters<typeof makerGone>[0], number, boolean][] = [
    ["this process", self, now, false],
    ["a pid no process has", { ...self, pid: 2 ** 22 + 1 }, now, true],
    ["this pid, started at another time", { ...self, start: (self.start ?? 0) + 1 }, now, true],
    ["another namespace, just written", { ...self, ns: "1" }, now, false],
    ["another namespace, long ago", { ...self, ns: "1" }, now - ABANDONED_MS - 1, true],
    ["no namespace known, just written", { pid: 2 ** 22 + 1 }, now, false],
  ];
  for (const [what, maker, written, gone] of cases) {
    assert.equal(makerGone(maker, written, now), gone, what);
  }
  for (const text of ["initializing", "initializing: service pid x", "held by me\n"]) {
    assert.equal(parseLockedText(text), undefined, text);
  }
});
