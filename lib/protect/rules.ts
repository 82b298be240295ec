/**
 * Protected paths (DESIGN.md §18), pure: which paths of a diff an agent may not land
 * unattended. Two tiers:
 *
 * - what the service itself reads and obeys — `service.yaml`, the plan files, `.worktreeinclude`,
 *   the service's state `.sdd/`, and the modules `service.yaml` imports — is always protected;
 *   `service.yaml` refuses a `!` entry that would lift it;
 * - the host's rules — CI definitions, CODEOWNERS — and the role templates are protected by
 *   default; `protected_paths` adds globs, and a `!glob` entry lifts one, gitignore style (the
 *   last entry that matches a path decides).
 *
 * Paths are relative to the repository root with `/`; globs are those of completion signals
 * (`*`, `**`, `?`, `[…]`), anchored at the root. Matching ignores case, as a case-insensitive
 * file system (macOS, Windows) would check `Service.yaml` out over `service.yaml`.
 */
import { hasGlobChars, matchGlob } from "../janitor/glob.ts";

/** What the service itself reads and obeys: never lifted. */
const ALWAYS_PROTECTED: readonly string[] = [
  "service.yaml",
  "plan.yaml",
  ".worktreeinclude",
  ".sdd/**",
];

/** The host's rules and the role templates: protected unless a `!` entry lifts them. */
const DEFAULT_PROTECTED: readonly string[] = [
  ".github/workflows/**",
  ".github/actions/**",
  ".gitlab-ci.yml",
  "CODEOWNERS",
  ".github/CODEOWNERS",
  "docs/CODEOWNERS",
  ".gitlab/CODEOWNERS",
  "templates/roles/**",
];

/** One entry of the ordered list (`negate`: a `!glob` that lifts what it matches). */
interface Entry {
  glob: string;
  negate: boolean;
}

/** The rules a diff is judged by. */
export interface ProtectionRules {
  /** Globs never lifted (lower-cased). */
  always: string[];
  /** Defaults, then the user's entries, in order (lower-cased). */
  entries: Entry[];
}

/** Where the rules come from. */
export interface RuleSources {
  /** `protected_paths` of service.yaml. */
  user?: readonly string[];
  /** Plan files of this run and earlier ones (relative paths). */
  planFiles?: readonly string[];
  /** Workspace files `service.yaml` imports (`adapters.<n>.module`, `trackers.<n>.module`). */
  modules?: readonly string[];
}

/** A path as the rules compare it: no leading `./` or `/`, no trailing `/`, lower case. */
function normalisePath(path: string): string {
  return path.replace(/^(\.\/)+/, "").replace(/^\/+/, "").replace(/\/+$/, "").toLowerCase();
}

/** A workspace-relative path inside the workspace, or undefined for one outside it. */
function insideWorkspace(path: string): string | undefined {
  const parts: string[] = [];
  for (const part of path.replace(/\\/g, "/").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  return parts.length > 0 ? parts.join("/") : undefined;
}

/** A literal path as a glob that matches exactly it. */
function literal(path: string): string {
  return path.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

/** The rules from their sources. */
export function protectionRules(sources: RuleSources = {}): ProtectionRules {
  const derived = [...(sources.planFiles ?? []), ...(sources.modules ?? [])]
    .flatMap((p) => {
      const inside = insideWorkspace(p);
      return inside ? [literal(inside)] : [];
    });
  const entries: Entry[] = DEFAULT_PROTECTED.map((glob) => ({ glob, negate: false }));
  for (const raw of sources.user ?? []) {
    const negate = raw.startsWith("!");
    entries.push({ glob: negate ? raw.slice(1) : raw, negate });
  }
  return {
    always: [...ALWAYS_PROTECTED, ...derived].map(normalisePath),
    entries: entries.map((e) => ({ ...e, glob: normalisePath(e.glob) })),
  };
}

/**
 * The always-protected path a `protected_paths` entry tries to lift by name (`!service.yaml`,
 * `!.sdd/**`, `!.sdd/backlog/x.yaml`): a configuration mistake, refused when service.yaml is
 * validated. A broad `!**` is not one: it lifts the defaults, and cannot lift these.
 */
export function liftsAlwaysProtected(entry: string): string | undefined {
  if (!entry.startsWith("!")) return undefined;
  const glob = normalisePath(entry.slice(1));
  return ALWAYS_PROTECTED.find((p) => {
    const always = normalisePath(p);
    return glob === always || (!hasGlobChars(glob) && matchGlob(always, glob));
  });
}

/** True when `path` is protected by `rules`. */
export function isProtected(rules: ProtectionRules, path: string): boolean {
  const p = normalisePath(path);
  if (p === "") return false;
  if (rules.always.some((g) => matchGlob(g, p))) return true;
  let verdict = false;
  for (const e of rules.entries) if (matchGlob(e.glob, p)) verdict = !e.negate;
  return verdict;
}

/**
 * True when `path` names a directory some protected glob lies under (`.github` for
 * `.github/workflows/**`): a file or symlink there replaces that directory.
 */
export function coversProtected(rules: ProtectionRules, path: string): boolean {
  const p = normalisePath(path);
  if (p === "") return false;
  const globs = [...rules.always, ...rules.entries.filter((e) => !e.negate).map((e) => e.glob)];
  return globs.some((glob) => {
    const segments = glob.split("/");
    let prefix = "";
    for (const segment of segments.slice(0, -1)) {
      if (hasGlobChars(segment)) return false;
      prefix = prefix ? `${prefix}/${segment}` : segment;
      if (prefix === p) return true;
    }
    return false;
  });
}

/** One path a diff changes, as the service read it from git (never from the agent). */
export interface ChangedPath {
  path: string;
  /** When the path is a symbolic link after the change: where it points (as stored). */
  linkTarget?: string;
}

/** A symbolic link in the tree being landed (its path, and where it points as stored). */
export interface TreeLink {
  path: string;
  target: string;
}

/** What a diff changes, and the links of the tree it lands. */
export interface DiffPaths {
  changes: readonly ChangedPath[];
  /** Links of the tree being landed (diff_paths.ts reads them). */
  links?: readonly TreeLink[];
}

/** Where a link at `linkPath` pointing at `target` leads, inside the workspace (or undefined). */
export function linkDestination(linkPath: string, target: string): string | undefined {
  if (target.startsWith("/")) return undefined; // outside the repository: not one of its paths
  const dir = linkPath.includes("/") ? linkPath.slice(0, linkPath.lastIndexOf("/")) : "";
  return insideWorkspace(dir ? `${dir}/${target}` : target);
}

/** True when `path` is `dir` or lies under it. */
function within(path: string, dir: string): boolean {
  const [p, d] = [normalisePath(path), normalisePath(dir)];
  return p === d || p.startsWith(`${d}/`);
}

/**
 * The changed paths the rules protect, sorted: a path a glob protects (both sides of a rename
 * are changed paths), a file or link that replaces a directory holding protected paths, a link
 * the change points at a protected path, and a path a protected link of the tree being landed
 * leads to (`service.yaml -> conf/real.yaml` protects `conf/real.yaml`).
 */
export function protectedChanges(rules: ProtectionRules, diff: DiffPaths): string[] {
  const { changes, links = [] } = diff;
  const guarded = links.flatMap((l) => {
    if (!isProtected(rules, l.path) && !coversProtected(rules, l.path)) return [];
    const to = linkDestination(l.path, l.target);
    return to ? [to] : [];
  });
  const hits = new Set<string>();
  for (const c of changes) {
    const to = c.linkTarget === undefined ? undefined : linkDestination(c.path, c.linkTarget);
    if (
      isProtected(rules, c.path) || coversProtected(rules, c.path) ||
      (to !== undefined && (isProtected(rules, to) || coversProtected(rules, to))) ||
      guarded.some((g) => within(c.path, g))
    ) {
      hits.add(c.path);
    }
  }
  return [...hits].sort();
}
