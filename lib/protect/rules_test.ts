import assert from "node:assert/strict";
import {
  type ChangedPath,
  liftsAlwaysProtected,
  linkDestination,
  protectedChanges,
  protectionRules,
  type TreeLink,
} from "./rules.ts";
import { outsideOwned } from "./owned.ts";

const RULES = protectionRules({
  planFiles: ["plans/release.yaml", "../outside/plan.yaml"],
  modules: ["adapters/mine.ts"],
});

Deno.test("protectedChanges() catches every way a diff can reach a protected path", () => {
  const table: { name: string; changes: ChangedPath[]; links?: TreeLink[]; want: string[] }[] = [
    { name: "service.yaml edited", changes: [{ path: "service.yaml" }], want: ["service.yaml"] },
    { name: "an unrelated file", changes: [{ path: "src/a.ts" }], want: [] },
    {
      name: "a CI workflow",
      changes: [{ path: ".github/workflows/ci.yml" }],
      want: [".github/workflows/ci.yml"],
    },
    { name: "GitLab CI", changes: [{ path: ".gitlab-ci.yml" }], want: [".gitlab-ci.yml"] },
    { name: "CODEOWNERS at the root", changes: [{ path: "CODEOWNERS" }], want: ["CODEOWNERS"] },
    {
      name: "CODEOWNERS under .github",
      changes: [{ path: ".github/CODEOWNERS" }],
      want: [".github/CODEOWNERS"],
    },
    {
      name: "the service's state",
      changes: [{ path: ".sdd/backlog/open/evil.yaml" }],
      want: [".sdd/backlog/open/evil.yaml"],
    },
    {
      name: ".worktreeinclude",
      changes: [{ path: ".worktreeinclude" }],
      want: [".worktreeinclude"],
    },
    { name: "the default plan", changes: [{ path: "plan.yaml" }], want: ["plan.yaml"] },
    {
      name: "a plan file an earlier run used",
      changes: [{ path: "plans/release.yaml" }],
      want: ["plans/release.yaml"],
    },
    {
      name: "a module service.yaml imports",
      changes: [{ path: "adapters/mine.ts" }],
      want: ["adapters/mine.ts"],
    },
    {
      name: "a role template",
      changes: [{ path: "templates/roles/backend/system_prompt.md" }],
      want: ["templates/roles/backend/system_prompt.md"],
    },
    {
      name: "a rename into a protected path: both sides are changes",
      changes: [{ path: "ci-draft.yml" }, { path: ".github/workflows/ci.yml" }],
      want: [".github/workflows/ci.yml"],
    },
    {
      name: "a rename out of a protected path (its deletion)",
      changes: [{ path: "CODEOWNERS" }, { path: "OWNERS.old" }],
      want: ["CODEOWNERS"],
    },
    {
      name: "case folded as a case-insensitive checkout would",
      changes: [{ path: "Service.YAML" }, { path: ".GitHub/Workflows/x.yml" }],
      want: [".GitHub/Workflows/x.yml", "Service.YAML"],
    },
    {
      name: "a file that replaces a protected directory",
      changes: [{ path: ".github" }, { path: ".sdd" }],
      want: [".github", ".sdd"],
    },
    {
      name: "a link pointing at a protected file",
      changes: [{ path: "docs/ci.yml", linkTarget: "../.github/workflows/ci.yml" }],
      want: ["docs/ci.yml"],
    },
    {
      name: "a link pointing at a protected directory",
      changes: [{ path: "state", linkTarget: ".sdd" }],
      want: ["state"],
    },
    {
      name: "a link pointing outside the repository is not a repository path",
      changes: [{ path: "etc", linkTarget: "/etc" }],
      want: [],
    },
    {
      name: "service.yaml is a link: the file it leads to is protected",
      changes: [{ path: "conf/real.yaml" }],
      links: [{ path: "service.yaml", target: "conf/real.yaml" }],
      want: ["conf/real.yaml"],
    },
    {
      name: "a linked workflow directory: files under its target are protected",
      changes: [{ path: "ci/workflows/deploy.yml" }],
      links: [{ path: ".github/workflows", target: "../ci/workflows" }],
      want: ["ci/workflows/deploy.yml"],
    },
    {
      name: "a link elsewhere in the tree protects nothing",
      changes: [{ path: "conf/real.yaml" }],
      links: [{ path: "docs/link.yaml", target: "../conf/real.yaml" }],
      want: [],
    },
    {
      name: "a plan file outside the workspace names nothing inside it",
      changes: [{ path: "outside/plan.yaml" }],
      want: [],
    },
  ];
  for (const c of table) {
    assert.deepEqual(protectedChanges(RULES, c), c.want, c.name);
  }
});

Deno.test("protected_paths adds globs and lifts defaults with !, last match wins; what the service obeys stays", () => {
  const rules = protectionRules({
    user: ["infra/**", "!.github/workflows/**", ".github/workflows/release.yml", "!**"],
  });
  const judged = (path: string) => protectedChanges(rules, { changes: [{ path }] }).length > 0;
  assert.equal(judged(".github/workflows/ci.yml"), false, "lifted by the last !**");
  assert.equal(judged("infra/main.tf"), false, "!** comes after it");
  assert.equal(judged("service.yaml"), true, "!** cannot lift service.yaml");
  assert.equal(judged(".sdd/x"), true);
  const ordered = protectionRules({
    user: ["!.github/workflows/**", ".github/workflows/release.yml", "infra/**"],
  });
  const judged2 = (path: string) => protectedChanges(ordered, { changes: [{ path }] }).length > 0;
  assert.equal(judged2(".github/workflows/ci.yml"), false);
  assert.equal(judged2(".github/workflows/release.yml"), true);
  assert.equal(judged2("infra/main.tf"), true);
  assert.equal(judged2("CODEOWNERS"), true, "other defaults stand");
});

Deno.test("liftsAlwaysProtected() names an entry that tries to lift what the service obeys", () => {
  assert.equal(liftsAlwaysProtected("!service.yaml"), "service.yaml");
  assert.equal(liftsAlwaysProtected("!./service.yaml"), "service.yaml");
  assert.equal(liftsAlwaysProtected("!.sdd/**"), ".sdd/**");
  assert.equal(liftsAlwaysProtected("!.sdd/backlog/x.yaml"), ".sdd/**");
  assert.equal(liftsAlwaysProtected("!**"), undefined, "a broad entry lifts the defaults only");
  assert.equal(liftsAlwaysProtected("service.yaml"), undefined);
  assert.equal(liftsAlwaysProtected("!.github/workflows/**"), undefined);
});

Deno.test("linkDestination() resolves a link's target from its directory, inside the workspace only", () => {
  assert.equal(linkDestination("a/b/link", "../c"), "a/c");
  assert.equal(linkDestination("link", "./x/./y"), "x/y");
  assert.equal(linkDestination("link", "../../etc/passwd"), undefined);
  assert.equal(linkDestination("link", "/etc/passwd"), undefined);
});

Deno.test("outsideOwned() reads owned_files as the scheduler does: files, directories, globs", () => {
  const owned = ["src/api.ts", "docs", "tests/**/*_test.ts"];
  assert.deepEqual(
    outsideOwned(owned, [
      "src/api.ts",
      "docs/guide.md",
      "tests/unit/a_test.ts",
      "src/other.ts",
      "README.md",
      "docs2/x",
    ]),
    ["README.md", "docs2/x", "src/other.ts"],
  );
  assert.deepEqual(outsideOwned([], ["anything"]), [], "a task that owns nothing is not flagged");
  assert.deepEqual(outsideOwned(["./src/"], ["src/a.ts"]), []);
});
