import assert from "node:assert/strict";
import { tempRepo } from "../git/_test_repo.ts";
import { parseConfig } from "../config/load.ts";
import { gateProgramProblems, treePaths, treeProgram } from "./gate_programs.ts";

const PROGRAMS: [string, string | undefined][] = [
  ["node_modules/.bin/tape test/*.js", "node_modules/.bin/tape"],
  ["./scripts/test.sh --fast", "scripts/test.sh"],
  ["CI=1 FORCE_COLOR=0 vendor/bin/phpunit", "vendor/bin/phpunit"],
  ["  .venv/bin/pytest -q  ", ".venv/bin/pytest"],
  ["a/b/../c", "a/c"],
  ["npm test", undefined], // on PATH: not the tree's business
  ["/usr/bin/make check", undefined],
  ["../elsewhere/run", undefined],
  ["a/../../x", undefined],
  ["$HOME/bin/check", undefined],
  ["bin/*", undefined],
  ["'my dir/run'", undefined],
  ["~/bin/check", undefined],
  ["CI=1", undefined],
  ["", undefined],
  ["./", undefined],
];

for (const [command, program] of PROGRAMS) {
  Deno.test(`treeProgram(${JSON.stringify(command)}) is ${program ?? "none"}`, () => {
    assert.equal(treeProgram(command), program);
  });
}

const config = (extra = "") =>
  parseConfig(
    `cli: claude
quality_gates:
  - {name: tests, command: "node_modules/.bin/tape test/*.js"}
roles:
  backend: {}
  tools:
    quality_gates:
      - {name: lint, command: ./scripts/lint.sh}
${extra}`,
    "s.yaml",
  );

async function repoWithInstall() {
  const repo = await tempRepo({ ".gitignore": "node_modules/\nscripts/\n", "index.js": "1\n" });
  await repo.write("node_modules/.bin/tape", "#!/bin/sh\n");
  await repo.write("scripts/lint.sh", "#!/bin/sh\n");
  return repo;
}

Deno.test("a gate whose program the checkout has but git does not track refuses the run, naming the link or copy that fixes it", async () => {
  await using repo = await repoWithInstall();
  const problems = await gateProgramProblems(repo.root, config(), ["backend", "tools"]);
  assert.deepEqual(problems.map((p) => p.subject), ["quality gate tests", "quality gate lint"]);
  assert.match(problems[0].problem, /uses node_modules\/\.bin\/tape, which your checkout has/);
  assert.match(problems[0].fix, /`worktree: \{symlink: \[node_modules\]\}` in service\.yaml/);
  assert.match(problems[1].fix, /link scripts into every worktree/);
  // Only the roles the run uses are asked about.
  assert.deepEqual(
    (await gateProgramProblems(repo.root, config(), ["backend"])).map((p) => p.subject),
    ["quality gate tests"],
  );
});

Deno.test("a gate program that reaches the gates' tree — linked, copied, tracked — or that nothing has, is no problem here", async () => {
  await using repo = await repoWithInstall();
  const linked = config("worktree:\n  symlink: [node_modules, scripts]\n");
  assert.deepEqual(await gateProgramProblems(repo.root, linked, ["backend", "tools"]), []);
  const copied = config("worktree:\n  symlink: [node_modules]\n  copy: [scripts/lint.sh]\n");
  assert.deepEqual(await gateProgramProblems(repo.root, copied, ["backend", "tools"]), []);
  // A role's own link covers only that role.
  const roleLink = parseConfig(
    `cli: claude
quality_gates: [{name: tests, command: "node_modules/.bin/tape"}]
roles:
  backend: {worktree: {symlink: [node_modules]}}
  web: {}
`,
    "s.yaml",
  );
  assert.deepEqual(await gateProgramProblems(repo.root, roleLink, ["backend"]), []);
  assert.equal((await gateProgramProblems(repo.root, roleLink, ["backend", "web"])).length, 1);

  await using tracked = await tempRepo({ "scripts/lint.sh": "#!/bin/sh\n" });
  const trackedOnly = parseConfig(
    "cli: claude\nquality_gates: [{name: lint, command: ./scripts/lint.sh}]\nroles: [backend]\n",
    "s.yaml",
  );
  assert.deepEqual(await gateProgramProblems(tracked.root, trackedOnly, ["backend"]), []);
  // Nowhere at all (an agent may be meant to write it): not this check's to refuse.
  await using bare = await tempRepo({ "README.md": "x\n" });
  assert.deepEqual(await gateProgramProblems(bare.root, config(), ["backend", "tools"]), []);
});

const PATHS: [string, string[]][] = [
  ["node node_modules/.bin/tape test/*.js", ["node_modules/.bin/tape"]],
  ["CI=1 python3 .venv/bin/pytest -q tests/unit", [".venv/bin/pytest", "tests/unit"]],
  ["./run.sh ./run.sh", ["run.sh"]],
  ["node --require=./setup/x.js a.js", []], // options are not paths the check can read
  ["npm test", []],
  ["sh -c 'node_modules/.bin/tape'", []], // quoted: the shell's to split
  ["deno test src/a_test.ts && $HOME/x/y", ["src/a_test.ts"]],
];

for (const [command, paths] of PATHS) {
  Deno.test(`treePaths(${JSON.stringify(command)}) is ${JSON.stringify(paths)}`, () => {
    assert.deepEqual(treePaths(command), paths);
  });
}

Deno.test("a step's test_passes signal that names an untracked, unlinked path refuses the run, naming the step", async () => {
  await using repo = await repoWithInstall();
  const planned = [
    { role: "backend", name: "test_passes of work-1", command: "node node_modules/.bin/tape t.js" },
    { role: "backend", name: "test_passes of work-2", command: "node node_modules/.bin/tape t.js" },
    { role: "backend", name: "test_passes of work-3", command: "node index.js" }, // tracked
  ];
  const none = parseConfig("cli: claude\nroles: [backend]\n", "s.yaml");
  const problems = await gateProgramProblems(repo.root, none, ["backend"], { planned });
  assert.deepEqual(problems.map((p) => p.subject), [
    "test_passes of work-1, test_passes of work-2",
  ]);
  assert.match(problems[0].problem, /uses node_modules\/\.bin\/tape/);
  const linked = parseConfig(
    "cli: claude\nroles: [backend]\nworktree: {symlink: [node_modules]}\n",
    "s.yaml",
  );
  assert.deepEqual(await gateProgramProblems(repo.root, linked, ["backend"], { planned }), []);
});
