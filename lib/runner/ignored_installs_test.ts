import assert from "node:assert/strict";
import { tempRepo } from "../git/_test_repo.ts";
import { parseConfig } from "../config/load.ts";
import { ignoredInstalls, ignoredInstallWarning } from "./ignored_installs.ts";

const conf = (extra = "") => parseConfig(`cli: claude\nroles: [backend, docs]\n${extra}`, "s.yaml");

async function repoWith(files: Record<string, string>, installed: string[]) {
  const repo = await tempRepo(files);
  for (const path of installed) await repo.write(path, "x\n");
  return repo;
}

Deno.test("an ignored .venv/ that no worktree environment gives is a warning naming both fixes", async () => {
  await using repo = await repoWith({ ".gitignore": ".venv/\n" }, [".venv/bin/python"]);
  const found = await ignoredInstalls(repo.root, conf(), ["backend", "docs", "backend"]);
  assert.deepEqual(found.map((f) => [f.dir, f.roles]), [[".venv", ["backend", "docs"]]]);
  const { problem, fix } = ignoredInstallWarning(found[0]);
  assert.match(problem, /\.venv\/ is in your checkout but ignored by git/);
  assert.match(problem, /roles backend, docs/);
  assert.match(fix, /`worktree: \{symlink: \[\.venv\]\}`/);
  assert.match(
    fix,
    /agents' worktrees only \(the gates' tree runs no setup\), `worktree: \{setup: \["python3 -m venv/,
  );
});

const PROVIDED: [string, string, Record<string, string>][] = [
  ["linked", "worktree: {symlink: [.venv]}\n", {}],
  ["set up", 'worktree: {setup: ["uv sync"]}\n', {}],
  ["copied", "worktree: {copy: [.venv/**]}\n", {}],
  ["in .worktreeinclude", "", { ".worktreeinclude": "/.venv\n" }],
];

for (const [how, extra, files] of PROVIDED) {
  Deno.test(`an ignored .venv/ the worktrees get (${how}) is no warning`, async () => {
    await using repo = await repoWith({ ".gitignore": ".venv/\n", ...files }, [".venv/bin/python"]);
    assert.deepEqual(await ignoredInstalls(repo.root, conf(extra), ["backend", "docs"]), []);
  });
}

Deno.test("a role's own link covers only that role; tracked or absent directories are no warning", async () => {
  await using repo = await repoWith({ ".gitignore": ".venv/\n" }, [".venv/bin/python"]);
  const roleLink = parseConfig(
    "cli: claude\nroles:\n  backend: {worktree: {symlink: [.venv]}}\n  docs: {}\n",
    "s.yaml",
  );
  const found = await ignoredInstalls(repo.root, roleLink, ["backend", "docs"]);
  assert.deepEqual(found.map((f) => [f.dir, f.roles]), [[".venv", ["docs"]]]);
  // A tracked vendor/ reaches every tree; a checkout with nothing installed has nothing to say.
  await using tracked = await tempRepo({ "vendor/lib.php": "<?php\n" });
  assert.deepEqual(await ignoredInstalls(tracked.root, conf(), ["backend"]), []);
  // node_modules/ is found from the trees by Node's own lookup in parent directories.
  await using node = await repoWith({ ".gitignore": "node_modules/\n" }, ["node_modules/t/i.js"]);
  assert.deepEqual(await ignoredInstalls(node.root, conf(), ["backend"]), []);
  await using bare = await tempRepo({ "README.md": "x\n" });
  assert.deepEqual(await ignoredInstalls(bare.root, conf(), ["backend"]), []);
});
