/**
 * What the service's git never does on behalf of anything an agent wrote (docs/security.md, "The
 * git boundary"). git runs programs that configuration names — hooks, an fsmonitor, filter, diff
 * and merge drivers, transports — and configuration can come from files an agent writes (its
 * worktree's `config.worktree`, a git directory its `commondir` names, any config file of a
 * host-process agent's user). Every value here is passed as command-line-scope configuration
 * (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which child gits inherit and which
 * beats every configuration file), never as a file git could be told to skip.
 *
 * Two levels: {@link SERVICE_GIT_CONFIG} on every git call of the service (lib/git/git.ts), and
 * {@link AGENT_TREE_CONFIG} plus the neutralised drivers of {@link driverOverrides} on every call
 * that reads or writes an agent's tree (lib/git/agent_tree.ts). Pure.
 */

/** One configuration value passed to git, and why it is there. */
export interface HardenedValue {
  key: string;
  value: string;
  why: string;
}

/** Configuration on every git call the service makes. */
export const SERVICE_GIT_CONFIG: readonly HardenedValue[] = [
  {
    key: "core.hooksPath",
    value: "/dev/null",
    why: "no hook runs: `--no-verify` skips only pre-commit and commit-msg, while " +
      "prepare-commit-msg, post-commit, reference-transaction, post-checkout and " +
      "post-index-change still would; no file can ever exist under /dev/null, so no hook is found",
  },
  {
    key: "core.fsmonitor",
    value: "false",
    why: "no file-system monitor: a path there is a program git runs on every status, add and " +
      "commit",
  },
];

/** Configuration added on every git call in an agent's tree. */
export const AGENT_TREE_CONFIG: readonly HardenedValue[] = [
  {
    key: "core.untrackedCache",
    value: "false",
    why: "the agent's cached listing of untracked files is never trusted (git drops it)",
  },
  {
    key: "core.splitIndex",
    value: "false",
    why: "one index file, which the service checks and rebuilds, and no shared index beside it",
  },
  {
    key: "protocol.allow",
    value: "never",
    why: "no transport: a partial clone's lazy fetch or a submodule would start one (ext::, " +
      "a remote's uploadpack command) from configuration",
  },
  {
    key: "submodule.recurse",
    value: "false",
    why: "no command descends into a submodule's own git directory and configuration",
  },
  {
    key: "commit.gpgSign",
    value: "false",
    why: "no signing program (gpg.program) runs, and no pinentry waits for a passphrase",
  },
  {
    key: "log.showSignature",
    value: "false",
    why: "no verifying program runs while a log is read",
  },
  {
    key: "rebase.updateRefs",
    value: "false",
    why: "a rebase moves the agent branch only, never another branch that points into it",
  },
  {
    key: "gc.auto",
    value: "0",
    why: "no detached `git gc` is left running after the call",
  },
  {
    key: "maintenance.auto",
    value: "false",
    why: "no detached `git maintenance` is left running after the call",
  },
];

/**
 * Sections whose drivers are programs an attribute of the tree (`.gitattributes`) selects by
 * name, and the keys that name the program. Diff drivers are left out: an empty `textconv` or
 * `command` makes git fail instead of skipping it, so diffs in agent trees pass `--no-textconv
 * --no-ext-diff` instead (see {@link diffSafeArgs}).
 */
const DRIVER_PROGRAMS: Readonly<Record<string, readonly string[]>> = {
  filter: ["clean", "smudge", "process"],
  merge: ["driver"],
};

/** The `git config --get-regexp` pattern that lists every driver {@link driverOverrides} needs. */
export const DRIVER_KEYS = "^(filter|merge)\\..+\\.(clean|smudge|process|driver)$";

/**
 * Values that switch off every filter and merge driver configuration defines, given the keys
 * `git config --name-only --get-regexp` printed for {@link DRIVER_KEYS}: each program becomes the
 * empty string, which git skips (a filter then passes bytes unchanged; a merge driver's files
 * conflict), and no filter is `required`. Names are taken verbatim (any character a subsection
 * may hold).
 */
export function driverOverrides(keys: readonly string[]): HardenedValue[] {
  const out: HardenedValue[] = [];
  const seen = new Set<string>();
  for (const key of keys) {
    const first = key.indexOf(".");
    const last = key.lastIndexOf(".");
    if (first < 0 || last <= first) continue;
    const section = key.slice(0, first).toLowerCase();
    const programs = DRIVER_PROGRAMS[section];
    const name = key.slice(first + 1, last);
    if (!programs || seen.has(`${section}.${name}`)) continue;
    seen.add(`${section}.${name}`);
    const why = `the tree's attributes pick ${section} driver "${name}": its program never runs`;
    for (const program of programs) {
      out.push({ key: `${section}.${name}.${program}`, value: "", why });
    }
    if (section === "filter") out.push({ key: `filter.${name}.required`, value: "false", why });
  }
  return out;
}

/**
 * The environment that gives git `values` as command-line configuration, after `inherited`'s own
 * (an operator's `GIT_CONFIG_COUNT` is kept, ours come later and win).
 */
export function configEnvironment(
  values: readonly HardenedValue[],
  inherited: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  const had = Number(inherited.GIT_CONFIG_COUNT ?? "0");
  const start = Number.isInteger(had) && had > 0 ? had : 0;
  values.forEach((v, i) => {
    env[`GIT_CONFIG_KEY_${start + i}`] = v.key;
    env[`GIT_CONFIG_VALUE_${start + i}`] = v.value;
  });
  env.GIT_CONFIG_COUNT = String(start + values.length);
  return env;
}

/** git's commands that print patches, where textconv and external diff programs would run. */
const PATCH_COMMANDS = new Set(["diff", "log", "show", "format-patch", "whatchanged"]);

/** Global options of git that take a value as the next argument. */
const VALUED_OPTIONS = new Set(["-c", "-C", "--git-dir", "--work-tree", "--namespace"]);

/**
 * `args` with `--no-textconv --no-ext-diff` right after a patch-printing command (diff, log,
 * show, …), so that no diff driver's program runs whatever the tree's attributes select. Pure.
 */
export function diffSafeArgs(args: readonly string[]): string[] {
  let i = 0;
  while (i < args.length && args[i].startsWith("-")) i += VALUED_OPTIONS.has(args[i]) ? 2 : 1;
  if (i >= args.length || !PATCH_COMMANDS.has(args[i])) return [...args];
  const rest = args.slice(i + 1);
  const add = ["--no-textconv", "--no-ext-diff"].filter((f) => !rest.includes(f));
  return [...args.slice(0, i + 1), ...add, ...rest];
}
