/**
 * An installed dependency directory (`node_modules/`, `.venv/` …) that the checkout has and git
 * ignores, which no worktree environment gives the agents' worktrees or the gates' trees: those
 * trees hold tracked files plus `worktree.copy`, `worktree.symlink` and what `worktree.setup`
 * makes (DESIGN.md §13), so a gate such as `npm test` fails there on every attempt, each an agent
 * session spent for nothing. A gate that names such a path is refused outright
 * (gate_programs.ts); one that needs it without naming it (`npm test`, `npx tape`, `pytest`) cannot
 * be told from the command, so this is a warning: at the start of `service run` and in `doctor`.
 * `.venv/` is the common case: `pytest` or `python -m pytest` in a tree without it runs without
 * the project's packages.
 */
import { git } from "../git/git.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { worktreeEnvFor } from "../worktree_env/spec.ts";
import { roleSources, type TreeSources } from "./gate_programs.ts";

/**
 * Where package managers install what a repository needs, and the setup that makes it. Not
 * `node_modules/`: the trees sit inside the checkout (`.sdd/worktrees/`), and Node, npm and npx
 * look for it in every parent directory, so `npm test` or a `require` there finds the checkout's
 * own; only a path naming it from the tree (`node_modules/.bin/tape`) does not, and that is
 * refused (gate_programs.ts).
 */
const INSTALL_DIRS: readonly { dir: string; setup: string }[] = [
  { dir: ".venv", setup: "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt" },
  { dir: "venv", setup: "python3 -m venv venv && venv/bin/pip install -r requirements.txt" },
  { dir: "vendor", setup: "composer install" },
  { dir: ".bundle", setup: "bundle install" },
];

/** One directory the trees will lack, and the roles whose trees lack it. */
export interface IgnoredInstall {
  dir: string;
  roles: string[];
  /** A `worktree.setup` command that would make it, for the fix. */
  setup: string;
}

/** The installed directories of the checkout that the trees of `roles` will not have. */
export async function ignoredInstalls(
  root: string,
  config: ServiceConfig,
  roles: Iterable<string>,
): Promise<IgnoredInstall[]> {
  const present = [];
  for (const d of INSTALL_DIRS) {
    const isDir = await Deno.stat(`${root}/${d.dir}`).then((s) => s.isDirectory, () => false);
    if (isDir) present.push(d);
  }
  if (present.length === 0) return [];
  // Ignored, not tracked: a tracked `vendor/` reaches every tree as it is.
  const ignored = await git(["check-ignore", "--", ...present.map((d) => `${d.dir}/`)], {
    cwd: root,
    allowFailure: true,
  });
  const names = new Set(ignored.stdout.split("\n").map((l) => l.replace(/\/$/, "")));
  const sources = roleSources(root, config);
  const found: IgnoredInstall[] = [];
  for (const d of present.filter((p) => names.has(p.dir))) {
    const lacking = [];
    for (const role of new Set(roles)) {
      if (!provided(worktreeEnvFor(config, role).setup, await sources(role), d.dir)) {
        lacking.push(role);
      }
    }
    if (lacking.length > 0) found.push({ dir: d.dir, roles: lacking, setup: d.setup });
  }
  return found;
}

/**
 * Whether a role's trees get `dir`: linked, copied (what the gates' check reads the same way), or
 * made by its setup, which is trusted to install what it needs (pure).
 */
function provided(setup: readonly string[], trees: TreeSources, dir: string): boolean {
  if (setup.length > 0) return true;
  const within = (p: string) => p === dir || p.startsWith(`${dir}/`);
  return trees.linked.some(within) || trees.copied.some(within);
}

/** The warning's words: what is missing where, and the two fixes (pure). */
export function ignoredInstallWarning(i: IgnoredInstall): { problem: string; fix: string } {
  return {
    problem: `${i.dir}/ is in your checkout but ignored by git, so the agents' worktrees and ` +
      `the gates' trees (role${i.roles.length > 1 ? "s" : ""} ${i.roles.join(", ")}) will not ` +
      "have it: a gate or an agent that needs it fails there",
    fix: `share it with every tree: \`worktree: {symlink: [${i.dir}]}\` in service.yaml; or, ` +
      `for the agents' worktrees only (the gates' tree runs no setup), \`worktree: {setup: ` +
      `["${i.setup}"]}\` (docs/worktrees.md)`,
  };
}

/** Whose trees to look at, and where the warnings go. */
export interface IgnoredInstallWarnOptions {
  roles: Iterable<string>;
  out: (line: string) => void;
}

/** Each directory the trees of `roles` will lack, said as a `warning:` line (the run goes on). */
export async function warnIgnoredInstalls(
  root: string,
  config: ServiceConfig,
  options: IgnoredInstallWarnOptions,
): Promise<void> {
  const { roles, out } = options;
  for (const i of await ignoredInstalls(root, config, roles)) {
    const { problem, fix } = ignoredInstallWarning(i);
    out(`warning: ${problem}\n  fix: ${fix}`);
  }
}
