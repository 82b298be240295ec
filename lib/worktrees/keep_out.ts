/**
 * Ignored and copied files never enter a commit the service makes, nor the history it lands
 * (DESIGN.md §13, issue 35). Filtered before committing, not after: a commit that adds a secret
 * and a later one that removes it still put the secret in the history a merge lands.
 *
 * What is kept out: every file added since the work's base that the worktree's own exclude file
 * matches (the copied files, the linked directories, the default ignores and the user's global
 * excludes: lib/worktrees/ignores.ts), or that the user's ignore rules match (`.gitignore`,
 * `info/exclude`). A file the base already has is the repository's and stays.
 *
 * 1. {@link keepOutOfIndex}: after `git add -A` (which an agent's `git add -f` outlives), such
 *    files are taken out of the index, so the service's commit of the agent's leftovers never
 *    holds them; they stay on disk.
 * 2. {@link dirtyHistory}: the agent's own commits since the base are looked at; when any of them
 *    holds such a file, {@link rewriteAsOne} replaces them by one service commit with the tip's
 *    (clean) tree on the base, so nothing reachable from the branch holds it any more.
 */
import { join } from "node:path";
import { commitIdentity, splitZ } from "../git/git.ts";
import type { AgentTree } from "../git/agent_tree.ts";
import { readPlainFile } from "../git/plain_file.ts";
import { MAX_PATTERN_BYTES, positivePatterns } from "./exclude_lines.ts";
import { WORKTREE_EXCLUDE_FILE } from "./worktree_config.ts";

/** Options of the calls here. */
export interface KeepOutOptions {
  signal?: AbortSignal;
}

/** The exclude file the service wrote for the tree, when there is one. */
async function excludeFile(tree: AgentTree): Promise<string | undefined> {
  // The file in the git directory the service's record names, whatever the agent did.
  const file = join(tree.dirs.admin_dir, WORKTREE_EXCLUDE_FILE);
  return await Deno.lstat(file).then((s) => (s.isFile ? file : undefined), () => undefined);
}

/** How many times the agent's own commits were listed (`git log`), for tests and benchmarks. */
export const historyListingCounts = { logs: 0 };

/** How many `ls-files -i` processes listed ignored files (for tests and benchmarks). */
export const ignoredListingCounts = { processes: 0 };

/**
 * The rules of {@link ignoredInIndex}, each one `ls-files` process: the service's exclude file's
 * lines given as command-line patterns (`--exclude=`), which git applies ahead of every
 * `.gitignore` (so an agent's cannot negate them) and, when none matches, the standard rules —
 * together exactly what either alone matches, as long as no line of the service's file is a
 * negation. When one is (the user's global excludes are copied in), or the file cannot be read as
 * plain data, it is given as `--exclude-from` in a process of its own, then the standard rules.
 */
function ignoreRules(file: string | undefined): string[][] {
  if (!file) return [["--exclude-standard"]];
  const read = readPlainFile(file, { hardLinks: true, maxBytes: MAX_PATTERN_BYTES });
  const patterns = read.kind === "plain" ? positivePatterns(read.bytes) : undefined;
  if (patterns) return [[...patterns.map((p) => `--exclude=${p}`), "--exclude-standard"]];
  return [[`--exclude-from=${file}`], ["--exclude-standard"]];
}

/**
 * The paths of the index `indexFile` names (the tree's own when undefined) that an ignore rule
 * matches: the service's exclude file (an agent's `.gitignore` cannot negate it), or the user's
 * standard rules.
 */
async function ignoredInIndex(
  tree: AgentTree,
  indexFile: string | undefined,
  o: KeepOutOptions,
): Promise<Set<string>> {
  const env = indexFile ? { GIT_INDEX_FILE: indexFile } : undefined;
  const found = new Set<string>();
  for (const rule of ignoreRules(await excludeFile(tree))) {
    ignoredListingCounts.processes++;
    const out = await tree.git(["ls-files", "-z", "-c", "-i", ...rule], { ...o, env });
    for (const p of splitZ(out.stdout)) found.add(p);
  }
  return found;
}

/** Of `paths`, those `base` does not have (the repository's own files stay). */
async function newSince(
  tree: AgentTree,
  base: string,
  paths: Iterable<string>,
  o: KeepOutOptions,
): Promise<string[]> {
  const all = [...paths];
  // `cat-file --batch-check` reads one name a line: a path with a newline is taken as new.
  const asked = all.filter((p) => !p.includes("\n"));
  if (asked.length === 0) return all.sort();
  const out = await tree.git(["cat-file", "--batch-check=%(objecttype)"], {
    ...o,
    stdin: asked.map((p) => `${base}:${p}`).join("\n") + "\n",
  });
  const answers = out.stdout.split("\n");
  const inBase = new Set(asked.filter((_, i) => !answers[i]?.endsWith("missing")));
  return all.filter((p) => !inBase.has(p)).sort();
}

/**
 * Take out of the index every file added since `base` that an ignore rule matches (they stay on
 * disk); returns their paths. Run after `git add -A`, before the service commits.
 */
export async function keepOutOfIndex(
  tree: AgentTree,
  base: string,
  o: KeepOutOptions = {},
): Promise<string[]> {
  const junk = await newSince(tree, base, await ignoredInIndex(tree, undefined, o), o);
  if (junk.length === 0) return [];
  const rm = ["--literal-pathspecs", "rm", "-q", "--cached", "--pathspec-from-file=-"];
  await tree.git([...rm, "--pathspec-file-nul"], { ...o, stdin: junk.join("\0") });
  return junk;
}

/**
 * The files an ignore rule matches that any commit in `base..HEAD` added or changed (and `base`
 * does not have): the agent's own commits, which a merge would land as they are.
 */
export async function dirtyHistory(
  tree: AgentTree,
  base: string,
  o: KeepOutOptions = {},
): Promise<string[]> {
  historyListingCounts.logs++;
  const touched = new Set(splitZ(
    (await tree.git(
      [
        "log",
        "--format=",
        "--name-only",
        "-z",
        "--no-renames",
        "--diff-filter=ACMRT",
        `${base}..HEAD`,
      ],
      o,
    )).stdout,
  ));
  if (touched.size === 0) return [];
  // The touched paths in an index of their own (their content does not matter to the rules).
  const index = await Deno.makeTempFile({ prefix: "service-keep-out-" });
  try {
    await Deno.remove(index); // git writes a new index there
    const env = { GIT_INDEX_FILE: index };
    // The empty blob's id, not written: nothing reads these entries' content, and a written blob
    // no commit holds would be left dangling in the repository (`git fsck` names it).
    const empty = await tree.text(["hash-object", "--stdin"], { ...o, stdin: "" });
    await tree.git(["update-index", "-z", "--index-info"], {
      ...o,
      env,
      stdin: [...touched].map((p) => `100644 ${empty}\t${p}\0`).join(""),
    });
    return await newSince(tree, base, await ignoredInIndex(tree, index, o), o);
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}

/** Options of {@link rewriteAsOne}: the commit's message, and whose identity commits. */
export interface RewriteOptions extends KeepOutOptions {
  message: string;
  /** The workspace whose identity the service commits with (default: the repository's). */
  identityRoot?: string;
}

/**
 * Replace the branch's commits since `base` by one commit of the service with HEAD's tree (which
 * {@link keepOutOfIndex} has cleaned) on `base`; returns the new tip. The files stay on disk.
 */
export async function rewriteAsOne(
  tree: AgentTree,
  base: string,
  options: RewriteOptions,
): Promise<string> {
  const { message, ...o } = options;
  const head = await tree.text(["rev-parse", "HEAD"], o);
  const treeId = await tree.text(["rev-parse", "HEAD^{tree}"], o);
  const commit = await tree.text(["commit-tree", treeId, "-p", base, "-m", message], {
    ...o,
    env: await commitIdentity(o.identityRoot ?? tree.dirs.common_dir),
  });
  const branch = (await tree.git(["symbolic-ref", "-q", "HEAD"], { ...o, allowFailure: true }))
    .stdout.trim();
  // Compare-and-swap on the branch (or a detached HEAD): a move meanwhile refuses.
  await tree.git([
    "update-ref",
    "-m",
    "service: keep ignored files out",
    branch || "HEAD",
    commit,
    head,
  ], o);
  return commit;
}
