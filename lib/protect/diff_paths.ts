/**
 * What a diff changes, read from git (never from the agent): every path `git diff <base> <tip>`
 * touches — renames as their two sides (`--no-renames`), deletions, mode changes — with where
 * each link the change leaves points; and the links of the tree being landed that the rules
 * care about. The judgement itself is pure (rules.ts, owned.ts).
 *
 * The tip's links are its base's links, less every path the diff touches, plus the links the diff
 * leaves: `git diff` of two commits lists every leaf whose mode or id differs (it recurses, and
 * `--no-renames` names both sides of a move), so that is `ls-tree` of the tip exactly. A base's
 * links are listed once and kept by commit id — a commit's tree never changes — since the tasks
 * cut from one target tip share it (issue 32: an `ls-tree` per task), and a target tip the merge
 * train made is known from the one it was merged onto the same way (lib/git/tree_links.ts).
 */
import { git } from "../git/git.ts";
import { OID } from "../git/ref_files.ts";
import { parseRawListing, type RawChange } from "../diff/raw_listing.ts";
import {
  LINK_MODE,
  linksAfter,
  linksOfCommit,
  listTreeLinks,
  type TreeLinkEntry,
  treeListingCounts,
} from "../git/tree_links.ts";

/** How many trees were listed with `ls-tree` (lib/git/tree_links.ts; for tests and benchmarks). */
export { treeListingCounts };
import {
  type ChangedPath,
  coversProtected,
  isProtected,
  type ProtectionRules,
  type TreeLink,
} from "./rules.ts";

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

/** A link of a tree: its path and its blob's id. */
type Link = TreeLinkEntry;

/** How many raw listings were asked of git here (for tests and benchmarks). */
export const rawListingCounts = { asked: 0 };

/** The leaves `git diff <base> <tip>` changes, in `cwd` (lib/diff/raw_listing.ts). */
async function rawDiff(cwd: string, base: string, tip: string): Promise<RawChange[]> {
  rawListingCounts.asked++;
  return parseRawListing(
    (await git(
      ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-ext-diff", base, tip, "--"],
      { cwd },
    )).bytes,
  );
}

/** The changed paths of `raw`, each link with where it points. */
async function withLinkTargets(cwd: string, raw: RawChange[]): Promise<ChangedPath[]> {
  const links = raw.filter((c) => c.mode === LINK_MODE);
  const targets = await readBlobs(cwd, links.map((c) => c.id));
  return raw.map((c) =>
    c.mode !== LINK_MODE ? { path: c.path } : { path: c.path, linkTarget: targets.get(c.id) }
  );
}

/** The paths `git diff <base> <tip>` changes, in `cwd` (a repository or worktree). */
export async function changedPaths(
  cwd: string,
  base: string,
  tip: string,
): Promise<ChangedPath[]> {
  return await withLinkTargets(cwd, await rawDiff(cwd, base, tip));
}

/** The links of the tip: its base's, less the paths the diff touches, plus those it leaves. */
function linksOfTip(base: Link[], raw: RawChange[]): Link[] {
  return linksAfter(
    base,
    raw.map((c) => ({
      path: c.path,
      new: /^0+$/.test(c.mode) ? null : { mode: c.mode, oid: c.id },
    })),
  );
}

/**
 * What `git diff <base> <tip>` changes (as {@link changedPaths}) and the links of `tip`'s tree
 * the rules care about (as {@link protectedLinks}), with one `git diff` and, per base commit,
 * one `ls-tree` (see the module's comment). A base that is not a commit id is listed as before.
 * `raw`: the leaves git listed for exactly these two commit ids already (the captured diff's own
 * listing, lib/worktrees/diff_capture.ts), which then stand for the `git diff`. The leaves are
 * answered too (for the sizes of what the diff leaves: ./file_sizes.ts).
 */
export async function changesAndLinks(
  cwd: string,
  diff: { base: string; tip: string; rules: ProtectionRules; raw?: readonly RawChange[] },
): Promise<{ changes: ChangedPath[]; links: TreeLink[]; raw: RawChange[] }> {
  const { base, tip, rules } = diff;
  if (!OID.test(base)) {
    const raw = await rawDiff(cwd, base, tip);
    const changes = await withLinkTargets(cwd, raw);
    return { changes, links: await protectedLinks(cwd, tip, rules), raw };
  }
  // Given only for two commit ids: a name could have moved since it was listed.
  const given = diff.raw && OID.test(tip) ? [...diff.raw] : undefined;
  const [raw, links] = await Promise.all([
    given ? Promise.resolve(given) : rawDiff(cwd, base, tip),
    linksOfCommit(cwd, base),
  ]);
  const changes = await withLinkTargets(cwd, raw);
  return { changes, links: await linkTargets(cwd, linksOfTip(links, raw), rules), raw };
}

/** The links of `tip`'s tree that a protected path is, or that stand for a protected directory. */
export async function protectedLinks(
  cwd: string,
  tip: string,
  rules: ProtectionRules,
): Promise<TreeLink[]> {
  return await linkTargets(cwd, await listTreeLinks(cwd, tip), rules);
}

/** Of `all`, the links the rules care about, with where each points. */
async function linkTargets(
  cwd: string,
  all: Link[],
  rules: ProtectionRules,
): Promise<TreeLink[]> {
  const links = all.filter((l) => isProtected(rules, l.path) || coversProtected(rules, l.path));
  const targets = await readBlobs(cwd, links.map((l) => l.id));
  return links.flatMap((l) => {
    const target = targets.get(l.id);
    return target === undefined ? [] : [{ path: l.path, target }];
  });
}
