import assert from "node:assert/strict";
import { join } from "node:path";
import {
  configEnvironment,
  diffSafeArgs,
  driverOverrides,
  SERVICE_GIT_CONFIG,
} from "./hardened.ts";
import { git } from "./git.ts";
import { tempRepo } from "./_test_repo.ts";

/** `[name, keys git config listed, the overrides as key=value]`. */
const DRIVERS: [string, string[], string[]][] = [
  ["no driver", [], []],
  ["a filter (git-lfs' shape): every program empty, not required", [
    "filter.lfs.clean",
    "filter.lfs.smudge",
    "filter.lfs.process",
  ], [
    "filter.lfs.clean=",
    "filter.lfs.smudge=",
    "filter.lfs.process=",
    "filter.lfs.required=false",
  ]],
  ["a subsection with dots, spaces and capitals, taken verbatim", ["filter.My Dr.v1.clean"], [
    "filter.My Dr.v1.clean=",
    "filter.My Dr.v1.smudge=",
    "filter.My Dr.v1.process=",
    "filter.My Dr.v1.required=false",
  ]],
  ["a merge driver", ["merge.ours.driver"], ["merge.ours.driver="]],
  ["a section in capitals (git lower-cases sections)", ["MERGE.x.driver"], ["merge.x.driver="]],
  ["keys without a subsection or of other sections: nothing", [
    "filter.clean",
    "diff.x.textconv",
    "core.fsmonitor",
  ], []],
];

for (const [name, keys, expected] of DRIVERS) {
  Deno.test(`driverOverrides(): ${name}`, () => {
    assert.deepEqual(driverOverrides(keys).map((v) => `${v.key}=${v.value}`), expected);
  });
}

Deno.test("configEnvironment() numbers its values after an operator's own GIT_CONFIG_COUNT", () => {
  const values = [{ key: "a.b", value: "1", why: "" }, { key: "c.d", value: "", why: "" }];
  assert.deepEqual(configEnvironment(values), {
    GIT_CONFIG_COUNT: "2",
    GIT_CONFIG_KEY_0: "a.b",
    GIT_CONFIG_VALUE_0: "1",
    GIT_CONFIG_KEY_1: "c.d",
    GIT_CONFIG_VALUE_1: "",
  });
  const after = configEnvironment(values, { GIT_CONFIG_COUNT: "3" });
  assert.equal(after.GIT_CONFIG_COUNT, "5");
  assert.equal(after.GIT_CONFIG_KEY_3, "a.b");
  assert.equal(configEnvironment(values, { GIT_CONFIG_COUNT: "x" }).GIT_CONFIG_COUNT, "2");
});

/** `[args, args with diff drivers switched off]`. */
const DIFFS: [string[], string[]][] = [
  [["diff", "a", "b"], ["diff", "--no-textconv", "--no-ext-diff", "a", "b"]],
  [["-c", "core.quotePath=true", "diff", "--no-color", "x", "--", "p"], [
    "-c",
    "core.quotePath=true",
    "diff",
    "--no-textconv",
    "--no-ext-diff",
    "--no-color",
    "x",
    "--",
    "p",
  ]],
  [["log", "--format=%h", "a..b"], [
    "log",
    "--no-textconv",
    "--no-ext-diff",
    "--format=%h",
    "a..b",
  ]],
  [["diff", "--no-ext-diff", "--no-textconv", "a"], [
    "diff",
    "--no-ext-diff",
    "--no-textconv",
    "a",
  ]],
  [["status", "--porcelain"], ["status", "--porcelain"]],
  [["--literal-pathspecs", "rm", "--cached"], ["--literal-pathspecs", "rm", "--cached"]],
  [["-C", "diff", "status"], ["-C", "diff", "status"]], // `diff` is -C's value
];

for (const [args, expected] of DIFFS) {
  Deno.test(`diffSafeArgs(): ${args.join(" ")}`, () => {
    assert.deepEqual(diffSafeArgs(args), expected);
  });
}

Deno.test("git() runs no hook and no fsmonitor of the repository, even where --no-verify does not reach", async () => {
  await using repo = await tempRepo();
  const marks = join(repo.root, "..", `marks-${crypto.randomUUID()}`);
  const script = `#!/bin/sh\necho "$0" >> ${marks}\nexit 0\n`;
  for (
    const hook of [
      "prepare-commit-msg",
      "post-commit",
      "reference-transaction",
      "post-index-change",
    ]
  ) {
    await Deno.writeTextFile(join(repo.root, ".git/hooks", hook), script, { mode: 0o755 });
  }
  await Deno.writeTextFile(join(repo.root, "fsmonitor"), script, { mode: 0o755 });
  await repo.git(["config", "core.fsmonitor", join(repo.root, "fsmonitor")]);
  try {
    await repo.write("x.txt", "x\n");
    await git(["add", "-A"], { cwd: repo.root });
    await git(["commit", "-q", "--no-verify", "-m", "x"], { cwd: repo.root });
    await git(["status"], { cwd: repo.root });
    assert.equal(await Deno.readTextFile(marks).catch(() => ""), "");
    assert.deepEqual(SERVICE_GIT_CONFIG.map((v) => v.key), ["core.hooksPath", "core.fsmonitor"]);
  } finally {
    await Deno.remove(marks).catch(() => {});
  }
});

Deno.test("git() refuses GIT_CONFIG_* in options.env: configuration goes through options.config", async () => {
  await using repo = await tempRepo();
  await assert.rejects(
    () => git(["status"], { cwd: repo.root, env: { GIT_CONFIG_COUNT: "0" } }),
    /pass configuration as options.config/,
  );
  const r = await git(["config", "--get", "x.y"], {
    cwd: repo.root,
    config: [{ key: "x.y", value: "from config", why: "" }],
  });
  assert.equal(r.stdout, "from config\n");
});
