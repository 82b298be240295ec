/**
 * A gate whose program or files the gate's tree will not have, found before a run starts. Gates —
 * service.yaml's quality gates and a step's `test_passes` signals alike — run in a fresh tree of
 * the merged commit (lib/merge/gates.ts): tracked files plus the worktree environment's copies and
 * links, never its setup. A gate such as `node_modules/.bin/tape test/*.js`, or `node
 * node_modules/.bin/tape …`, in a repository that ignores `node_modules/` finds nothing there, so
 * every task's gates would fail on every attempt — each attempt an agent session spent for
 * nothing. When a path the command names is in the checkout but neither tracked, copied nor
 * linked, the run is refused with the fix (`worktree.symlink`), and `doctor` says the same.
 */
import { posix } from "node:path";
import type { ServiceConfig } from "../config/schema.ts";
import { git } from "../git/git.ts";
import { qualityGatesFor } from "../verification/quality_gates.ts";
import { worktreeEnvFor } from "../worktree_env/spec.ts";
import { copySources, linkSources, readWorktreeInclude } from "../worktree_env/select.ts";
import type { SetupProblem } from "./run_checks.ts";

/** Characters that make a word more than a literal path to the shell. */
const SHELL_SPECIAL = /[$`*?[\]{}()'"\\;|&<>~!#]/;

/**
 * The program a gate command starts when it is a path relative to the tree (`./x`, `a/b`),
 * normalised (`node_modules/.bin/tape`); undefined for a name found on PATH, an absolute path,
 * a path out of the tree or anything the shell would expand (pure).
 */
export function treeProgram(command: string): string | undefined {
  const words = command.trim().split(/\s+/);
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=\S*$/.test(words[i])) i++; // VAR=value
  const program = words[i];
  if (!program || !program.includes("/") || program.startsWith("/")) return undefined;
  if (SHELL_SPECIAL.test(program)) return undefined;
  const path = posix.normalize(program);
  if (path === "." || path.startsWith("../") || path === ".." || path.endsWith("/")) {
    return undefined;
  }
  return path;
}

/**
 * Every path relative to the tree that `command` names plainly — its program or an argument, such
 * as `node_modules/.bin/tape` in `node node_modules/.bin/tape test/*.js` — normalised; words the
 * shell would expand, options and paths out of the tree are left out (pure).
 */
export function treePaths(command: string): string[] {
  const words = command.trim().split(/\s+/);
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=\S*$/.test(words[i])) i++; // VAR=value
  const paths = new Set<string>();
  for (const word of words.slice(i)) {
    if (word.startsWith("-")) continue;
    const path = treeProgram(word);
    if (path) paths.add(path);
  }
  return [...paths];
}

/** A gate a plan's step runs on the merged tree (a `test_passes` signal), with its step's role. */
export interface PlannedGate {
  role: string;
  /** How the user knows it, e.g. `test_passes of work-1`. */
  name: string;
  command: string;
}

/** The plan's own gates to look at besides the roles' quality gates. */
export interface GateProgramOptions {
  planned?: readonly PlannedGate[];
}

/** One gate program to look for, and the gates that run it. */
interface Wanted {
  path: string;
  gates: Set<string>;
  roles: Set<string>;
}

/**
 * The paths that the gates of `roles` (and the plan's own, `planned`) name, which the checkout has
 * but the gates' trees will not.
 */
export async function gateProgramProblems(
  root: string,
  config: ServiceConfig,
  roles: Iterable<string>,
  options: GateProgramOptions = {},
): Promise<SetupProblem[]> {
  const { planned = [] } = options;
  const wanted = new Map<string, Wanted>();
  const want = (role: string, gate: string, command: string) => {
    for (const path of treePaths(command)) {
      const w = wanted.get(path) ?? { path, gates: new Set(), roles: new Set() };
      w.gates.add(gate);
      w.roles.add(role);
      wanted.set(path, w);
    }
  };
  for (const role of new Set(roles)) {
    for (const gate of qualityGatesFor(config, role)) {
      want(role, `quality gate ${gate.name}`, gate.command);
    }
  }
  for (const gate of planned) want(gate.role, gate.name, gate.command);
  if (wanted.size === 0) return [];
  const tracked = await trackedOf(root, [...wanted.keys()]);
  const sources = roleSources(root, config);
  const problems: SetupProblem[] = [];
  for (const w of wanted.values()) {
    if (tracked.has(w.path) || !await existsIn(root, w.path)) continue;
    if (await givenToEveryTree(w, sources)) continue;
    problems.push(problemOf(w));
  }
  return problems;
}

/** What a role's trees get from the checkout: the paths linked and the files copied. */
export interface TreeSources {
  linked: string[];
  copied: string[];
}

/** Each role's {@link TreeSources}, read from the checkout once per role when first asked. */
export function roleSources(
  root: string,
  config: ServiceConfig,
): (role: string) => Promise<TreeSources> {
  const include = readWorktreeInclude(root);
  const read = new Map<string, Promise<TreeSources>>();
  return (role) => {
    let sources = read.get(role);
    if (!sources) {
      read.set(
        role,
        sources = (async () => {
          const spec = worktreeEnvFor(config, role);
          const { found } = await linkSources(root, spec.symlink);
          const copy = [...spec.copy, ...await include];
          return { linked: found, copied: await copySources(root, copy, { linked: found }) };
        })(),
      );
    }
    return sources;
  };
}

/** The paths of `paths` the checked-out commit tracks. */
async function trackedOf(root: string, paths: string[]): Promise<Set<string>> {
  const listed = await git(
    ["--literal-pathspecs", "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", ...paths],
    { cwd: root, allowFailure: true },
  );
  return new Set(listed.code === 0 ? listed.stdout.split("\0").filter(Boolean) : []);
}

async function existsIn(root: string, path: string): Promise<boolean> {
  return await Deno.stat(posix.join(root, path)).then(() => true, () => false);
}

/** Whether every role running the program gets it into its trees by a link or a copy. */
async function givenToEveryTree(
  w: Wanted,
  sources: (role: string) => Promise<TreeSources>,
): Promise<boolean> {
  for (const role of w.roles) {
    const { linked, copied } = await sources(role);
    if (linked.some((l) => w.path === l || w.path.startsWith(l + "/"))) continue;
    if (!copied.includes(w.path)) return false;
  }
  return true;
}

function problemOf(w: Wanted): SetupProblem {
  const gates = [...w.gates];
  const top = w.path.split("/")[0];
  const inDir = top !== w.path;
  return {
    subject: gates.length > 3
      ? `${gates.slice(0, 3).join(", ")} … (${gates.length})`
      : gates.join(", "),
    problem: `it uses ${w.path}, which your checkout has but git does not track, so the fresh ` +
      "tree the gates run in will not have it (only tracked files, worktree.copy and " +
      "worktree.symlink reach it): every task's gates would fail",
    fix: inDir
      ? `link ${top} into every worktree (\`worktree: {symlink: [${top}]}\` in service.yaml, ` +
        "docs/worktrees.md), or commit it"
      : `copy it into every worktree (\`worktree: {copy: [${w.path}]}\` in service.yaml, ` +
        "docs/worktrees.md), or commit it",
  };
}
