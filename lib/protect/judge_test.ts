import assert from "node:assert/strict";
import { join } from "node:path";
import { workspacePaths } from "../workspace.ts";
import { type Judgement, Protection, workspaceModules } from "./judge.ts";

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stderr: "piped" }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim();
}

async function repo(files: Record<string, string>, links: Record<string, string> = {}) {
  const dir = await Deno.makeTempDir({ prefix: "protect-" });
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "config", "user.email", "t@localhost");
  await git(dir, "config", "user.name", "t");
  await write(dir, files, links);
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "base");
  return dir;
}

async function write(dir: string, files: Record<string, string>, links: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  for (const [path, target] of Object.entries(links)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.symlink(target, join(dir, path));
  }
}

async function judged(dir: string, owned: string[] = []): Promise<Judgement> {
  const base = await git(dir, "rev-parse", "HEAD~1");
  const tip = await git(dir, "rev-parse", "HEAD");
  const protection = new Protection({
    paths: workspacePaths(dir),
    protectedPaths: [],
    modules: [],
  });
  const j = await protection.judge({ cwd: dir, base, tip, owned });
  assert.ok(!("error" in j), JSON.stringify(j));
  return j as Judgement;
}

Deno.test("Protection.judge() reads renames, deletions and links from git, not from the agent", async () => {
  const dir = await repo({ "ci-draft.yml": "on: push\n", "CODEOWNERS": "* @a\n", "a.txt": "a\n" });
  try {
    await Deno.mkdir(join(dir, ".github/workflows"), { recursive: true });
    await Deno.rename(join(dir, "ci-draft.yml"), join(dir, ".github/workflows/ci.yml"));
    await Deno.remove(join(dir, "CODEOWNERS"));
    await write(dir, { "a.txt": "b\n" }, { "docs/owners": "../CODEOWNERS" });
    await git(dir, "add", "-A");
    await git(dir, "commit", "-q", "-m", "agent");
    const j = await judged(dir, ["a.txt"]);
    assert.deepEqual(j.protected, [".github/workflows/ci.yml", "CODEOWNERS", "docs/owners"]);
    assert.deepEqual(j.outsideOwned, [
      ".github/workflows/ci.yml",
      "CODEOWNERS",
      "ci-draft.yml",
      "docs/owners",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Protection.judge() follows a protected link of the tree to the file it leads to", async () => {
  const dir = await repo({ "conf/real.yaml": "cli: claude\n" }, {
    "service.yaml": "conf/real.yaml",
  });
  try {
    await write(dir, { "conf/real.yaml": "cli: claude\nisolation: worktree\n" }, {});
    await git(dir, "commit", "-q", "-am", "agent");
    assert.deepEqual((await judged(dir)).protected, ["conf/real.yaml"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Protection.judge() protects the plan files the workspace's run journals name", async () => {
  const dir = await repo({ "plans/nightly.yaml": "stages: []\n", "notes.md": "x\n" });
  try {
    const run = join(dir, ".sdd/runs/r1");
    await Deno.mkdir(run, { recursive: true });
    await Deno.writeTextFile(
      join(run, "journal.jsonl"),
      JSON.stringify({
        type: "run_started",
        data: { run_id: "r1", plan: "nightly", plan_file: "plans/nightly.yaml" },
      }) + "\n",
    );
    await write(dir, { "plans/nightly.yaml": "stages: [x]\n", "notes.md": "y\n" }, {});
    await git(dir, "commit", "-q", "-am", "agent");
    assert.deepEqual((await judged(dir)).protected, ["plans/nightly.yaml"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Protection.judge() says why when the diff cannot be read", async () => {
  const dir = await repo({ "a.txt": "a\n" });
  try {
    const protection = new Protection({
      paths: workspacePaths(dir),
      protectedPaths: [],
      modules: [],
    });
    const j = await protection.judge({ cwd: dir, base: "0".repeat(40), tip: "HEAD", owned: [] });
    assert.ok("error" in j);
    assert.match(j.error, /changed paths could not be read/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("workspaceModules() keeps the workspace's own files, not registry or remote modules", () => {
  assert.deepEqual(
    workspaceModules(
      ["./adapters/a.ts", "npm:x", "jsr:@y/z", "https://e/x.ts", "file:///w/b.ts", "/w/c.ts"],
      "/w",
    ),
    ["./adapters/a.ts", "b.ts", "c.ts"],
  );
});
