/**
 * What a diff changes, read from git (never from the agent): every path `git diff <base> <tip>`
 * touches — renames as their two sides (`--no-renames`), deletions, mode changes — with where
 * each link the change leaves points; and the links of the tree being landed that the rules
 * care about. The judgement itself is pure (rules.ts, owned.ts).
 */
import { git, splitZ } from "../git/git.ts";
import {
  type ChangedPath,
  coversProtected,
  isProtected,
  type ProtectionRules,
  type TreeLink,
} from "./rules.ts";

/** git's mode of a symbolic link. */
const LINK_MODE = "120000";

/** Read blobs by id in one `git cat-file --batch` call; their bytes as text, by id. */
async function readBlobs(cwd: string, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const unique = [...new Set(ids)];
  const bytes = (await git(["cat-file", "--batch"], { cwd, stdin: unique.join("\n") + "\n" }))
    .bytes;
  const decoder = new TextDecoder();
  let at = 0;
  for (const id of unique) {
    const eol = bytes.indexOf(10, at);
    if (eol < 0) break;
    const header = decoder.decode(bytes.subarray(at, eol)).split(" ");
    at = eol + 1;
    if (header[1] !== "blob") continue; // "<id> missing"
    const size = Number(header[2]);
    out.set(id, decoder.decode(bytes.subarray(at, at + size)));
    at += size + 1;
  }
  return out;
}

/** The paths `git diff <base> <tip>` changes, in `cwd` (a repository or worktree). */
export async function changedPaths(
  cwd: string,
  base: string,
  tip: string,
): Promise<ChangedPath[]> {
  const raw = splitZ(
    (await git(
      ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-ext-diff", base, tip, "--"],
      { cwd },
    )).stdout,
  );
  const changes: { path: string; link?: string }[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    // ":<old mode> <new mode> <old id> <new id> <status>", then the path.
    const [, newMode, , newId] = raw[i].slice(1).split(" ");
    changes.push({ path: raw[i + 1], ...(newMode === LINK_MODE ? { link: newId } : {}) });
  }
  const targets = await readBlobs(cwd, changes.flatMap((c) => c.link ? [c.link] : []));
  return changes.map((c) =>
    c.link === undefined ? { path: c.path } : { path: c.path, linkTarget: targets.get(c.link) }
  );
}

/** The links of `tip`'s tree that a protected path is, or that stand for a protected directory. */
export async function protectedLinks(
  cwd: string,
  tip: string,
  rules: ProtectionRules,
): Promise<TreeLink[]> {
  const entries = splitZ((await git(["ls-tree", "-r", "-z", "--full-tree", tip], { cwd })).stdout);
  const links: { path: string; id: string }[] = [];
  for (const entry of entries) {
    // "<mode> <type> <id>\t<path>"
    const tab = entry.indexOf("\t");
    const [mode, , id] = entry.slice(0, tab).split(" ");
    const path = entry.slice(tab + 1);
    if (mode !== LINK_MODE) continue;
    if (isProtected(rules, path) || coversProtected(rules, path)) links.push({ path, id });
  }
  const targets = await readBlobs(cwd, links.map((l) => l.id));
  return links.flatMap((l) => {
    const target = targets.get(l.id);
    return target === undefined ? [] : [{ path: l.path, target }];
  });
}
