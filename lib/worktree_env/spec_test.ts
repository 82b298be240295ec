import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { DEFAULT_IGNORES } from "../worktrees/ignores.ts";
import { ignoreLinesFor, linkedInstalls, WORKTREE_ENV_DEFAULTS, worktreeEnvFor } from "./spec.ts";

const CONFIG = `
cli: claude
worktree:
  copy: [".env"]
  symlink: ["node_modules/"]
  setup: ["npm ci"]
  ports: 1
roles:
  backend: {}
  web:
    worktree:
      copy: ["config/*.local.json", ".env"]
      setup: ["npm run build"]
      ports: 2
      port_range: [31000, 31009]
  py:
    worktree:
      symlink: [".venv"]
      default_ignores: false
      setup_timeout_s: 30
`;

Deno.test("worktreeEnvFor(): a role's lists add to the top level's, its other keys replace them, the rest is the default (table)", () => {
  const config = parseConfig(CONFIG, "service.yaml");
  const rows: [string, Partial<ReturnType<typeof worktreeEnvFor>>][] = [
    ["backend", {
      copy: [".env"],
      symlink: ["node_modules"],
      setup: ["npm ci"],
      ports: 1,
      port_range: [...WORKTREE_ENV_DEFAULTS.port_range],
      default_ignores: true,
      setup_timeout_s: 300,
    }],
    ["web", {
      copy: [".env", "config/*.local.json"],
      setup: ["npm ci", "npm run build"],
      ports: 2,
      port_range: [31000, 31009],
    }],
    ["py", {
      symlink: ["node_modules", ".venv"],
      default_ignores: false,
      setup_timeout_s: 30,
      ports: 1,
    }],
    ["unknown-role", { copy: [".env"], teardown: [] }],
  ];
  for (const [role, want] of rows) {
    const got = worktreeEnvFor(config, role);
    for (const [key, value] of Object.entries(want)) {
      assert.deepEqual(got[key as keyof typeof got], value, `${role}.${key}`);
    }
  }
});

Deno.test("worktreeEnvFor(): without a worktree block nothing is copied, linked, run or leased, and build caches are ignored", () => {
  const got = worktreeEnvFor(parseConfig("cli: claude\nroles: [backend]\n", "s.yaml"), "backend");
  assert.deepEqual(got, {
    copy: [],
    symlink: [],
    setup: [],
    teardown: [],
    setup_timeout_s: 300,
    ports: 0,
    port_range: [20000, 29999],
    default_ignores: true,
  });
});

Deno.test("ignoreLinesFor(): the caches, then each linked and copied path exactly (a link without its trailing /)", () => {
  assert.deepEqual(
    ignoreLinesFor({ default_ignores: true }, ["node_modules", "packages/a/node_modules"], [
      ".env",
    ]),
    [...DEFAULT_IGNORES, "/node_modules", "/packages/a/node_modules", "/.env"],
  );
  assert.deepEqual(ignoreLinesFor({ default_ignores: false }, [], [".env"]), ["/.env"]);
});

Deno.test("service.yaml refuses worktree entries that reach out of the workspace or into .git and .sdd", () => {
  const bad: [string, RegExp][] = [
    ["copy: ['../secrets.env']", /must not contain '\.\.'/],
    ["copy: ['.sdd/runs']", /\.sdd\/ is never copied/],
    ["symlink: ['/usr/lib/node_modules']", /relative to the workspace root/],
    ["symlink: ['.git/hooks']", /\.git\/ is never linked/],
    ["symlink: ['**/node_modules']", /one '\*' per path segment/],
    ["port_range: [30000, 20000]", /low <= high/],
    ["ports: 3\n  port_range: [30000, 30001]", /holds 2 port\(s\), fewer than ports: 3/],
    ["port_range: [80, 90]", /port_range/],
    ["setup: npm ci", /expected array/],
    ["symlnk: ['.venv']", /did you mean 'symlink'/],
  ];
  for (const [block, message] of bad) {
    assert.throws(
      () => parseConfig(`cli: claude\nroles: [backend]\nworktree:\n  ${block}\n`, "s.yaml"),
      (e: Error) => message.test(`${e.message} ${(e as { fix?: string }).fix ?? ""}`),
      block,
    );
  }
});

Deno.test("linkedInstalls(): a setup that installs into a linked directory — into the checkout's own — is found (table)", () => {
  const rows: [string[], string, boolean][] = [
    [["node_modules"], "npm ci", true],
    [["node_modules"], "npm install --no-audit", true],
    [["node_modules"], "cd web && pnpm install", true],
    [["node_modules"], "yarn", true],
    [["node_modules"], "yarn install --frozen-lockfile", true],
    [["node_modules"], "bun install", true],
    [["packages/a/node_modules"], "npm ci", true],
    [["node_modules"], "npm run build", false],
    [["node_modules"], "yarn build", false],
    [["node_modules"], "npx prisma generate", false],
    [[".venv"], "uv sync", true],
    [[".venv"], ".venv/bin/pip install -e .", true],
    [[".venv"], "python3 -m venv .venv", true],
    [[".venv"], "poetry install", true],
    [[".venv"], "npm ci", false],
    [[".venv"], "python3 -m compileall src", false],
    [[], "npm ci", false],
  ];
  for (const [symlink, command, clash] of rows) {
    const got = linkedInstalls({ symlink, setup: [command] });
    assert.equal(got.length > 0, clash, `${symlink.join(",") || "(nothing linked)"} + ${command}`);
  }
});
