import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { populateTree } from "./populate.ts";
import { copySources, linkSources, readWorktreeInclude } from "./select.ts";

/** A checkout with tracked files, ignored and untracked ones, links, and the service's state. */
async function checkout(): Promise<TestRepo> {
  const repo = await tempRepo({
    "README.md": "hi\n",
    ".gitignore": ".env\n*.local.json\nnode_modules/\nsecrets/\n.venv/\n",
    "config/settings.json": "{}\n",
    "src/app.py": "print(1)\n",
    "packages/a/package.json": "{}\n",
    "packages/b/package.json": "{}\n",
  });
  const files = [
    ".env",
    "sub/.env",
    "config/a.local.json",
    "config/deep/b.local.json",
    "node_modules/left-pad/index.js",
    "packages/a/node_modules/x/index.js",
    "packages/b/node_modules/y/index.js",
    "secrets/key.pem",
    "notes.txt",
    ".venv/bin/activate",
    ".sdd/runtime/state.env",
  ];
  for (const f of files) await repo.write(f, `${f}\n`);
  await Deno.symlink("/etc/hostname", join(repo.root, "link-out.env"));
  await Deno.symlink("config/a.local.json", join(repo.root, "link-in.local.json"));
  return repo;
}

Deno.test("copySources(): gitignore patterns pick untracked files, ignored ones included, never tracked ones, .sdd/ or linked directories (table)", async () => {
  await using repo = await checkout();
  const rows: [string[], string[], string[]][] = [
    // [patterns, linked, files copied]
    [[".env"], [], [".env", "sub/.env"]],
    [["/.env"], [], [".env"]],
    [["config/*.local.json"], [], ["config/a.local.json"]],
    [["config/**/*.local.json"], [], ["config/a.local.json", "config/deep/b.local.json"]],
    [["*.local.json"], [], [
      "config/a.local.json",
      "config/deep/b.local.json",
      "link-in.local.json",
    ]],
    [["*.env"], [], [".env", "link-out.env", "sub/.env"]],
    [["*.env", "!sub/.env"], [], [".env", "link-out.env"]],
    [["secrets/"], [], ["secrets/key.pem"]],
    [["notes.txt"], [], ["notes.txt"]], // untracked and not ignored
    [["config/settings.json", "src/"], [], []], // tracked: the worktree has them
    [["state.env"], [], []], // under .sdd/: never
    [["index.js"], ["node_modules", "packages/a/node_modules", "packages/b/node_modules"], []],
    [["index.js"], ["node_modules"], [
      "packages/a/node_modules/x/index.js",
      "packages/b/node_modules/y/index.js",
    ]],
    [["nothing-matches"], [], []],
    [[], [], []],
  ];
  for (const [patterns, linked, want] of rows) {
    assert.deepEqual(await copySources(repo.root, patterns, { linked }), want, patterns.join(" "));
  }
});

Deno.test("linkSources(): literal paths and one * per segment, never through a link; tracked paths are not linked", async () => {
  await using repo = await checkout();
  await Deno.symlink(join(repo.root, "packages"), join(repo.root, "pk"));
  const got = await linkSources(repo.root, [
    "node_modules",
    "packages/*/node_modules",
    "pk/*/node_modules", // through a link: not followed
    ".venv",
    "src",
    "missing-dir",
  ]);
  assert.deepEqual(got, {
    found: [".venv", "node_modules", "packages/a/node_modules", "packages/b/node_modules"],
    missing: ["pk/*/node_modules", "missing-dir"],
    tracked: ["src"],
  });
});

Deno.test("readWorktreeInclude(): its pattern lines, without blanks and comments; none without the file", async () => {
  await using repo = await checkout();
  assert.deepEqual(await readWorktreeInclude(repo.root), []);
  await repo.write(".worktreeinclude", "# local config\n.env\n\nconfig/*.local.json  \n");
  assert.deepEqual(await readWorktreeInclude(repo.root), [".env", "config/*.local.json"]);
});

Deno.test("populateTree(): copies files and links directories; never follows a link out of the workspace, never overwrites, never writes through a link out of the tree", async () => {
  await using repo = await checkout();
  // The repository tracks a link that leads out of the tree: nothing is written through it.
  const outside = await Deno.makeTempDir();
  try {
    await Deno.symlink(outside, join(repo.root, "escape"));
    await repo.git(["add", "escape"]);
    await repo.commitAll("a tracked link out");
    await repo.write("escape-local.env", "x\n"); // an untracked file beside it
    const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
    const got = await populateTree(repo.root, wt.path, {
      copy: [".env", "sub/.env", "link-out.env", "link-in.local.json", "README.md", "escape/x.env"],
      link: ["node_modules", "src"],
    });
    assert.deepEqual(got.copied, [".env", "sub/.env", "link-in.local.json"]);
    assert.deepEqual(got.linked, ["node_modules"]);
    assert.deepEqual(got.skipped.map((s) => `${s.path}: ${s.why}`), [
      "link-out.env: a symlink that leads out of the workspace (not followed)",
      "README.md: the worktree has it already",
      "escape/x.env: gone from the checkout",
      "src: the worktree has it already",
    ]);
    assert.equal(await repo.read("sub/.env", wt.path), "sub/.env\n");
    // A link inside the workspace is copied as the file it leads to, not as a link.
    assert.equal((await Deno.lstat(join(wt.path, "link-in.local.json"))).isFile, true);
    assert.equal(
      await Deno.realPath(join(wt.path, "node_modules")),
      join(repo.root, "node_modules"),
    );
    await repo.write("escape/y.env", "y\n"); // lands in `outside` through the checkout's link
    const again = await populateTree(repo.root, wt.path, { copy: ["escape/y.env"], link: [] });
    assert.deepEqual(again.skipped.map((s) => s.why), [
      "a symlink that leads out of the workspace (not followed)",
    ]);
    assert.deepEqual(
      await Array.fromAsync(Deno.readDir(outside)).then((e) => e.map((x) => x.name)),
      [
        "y.env",
      ],
    );
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});
