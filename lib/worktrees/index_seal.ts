/**
 * Whether a worktree's index is still the one the service's own `git worktree add` wrote. Settling
 * a worktree after a host-process agent (lib/worktrees/trees.ts) rebuilds its index from the
 * branch, because an agent can write an index of its own bytes (an entry `../../x` would have the
 * host read a file outside the worktree). A rebuilt index has no stat information, so the next
 * `git add -A` hashes every file of the worktree again (~200 ms for 5 000 files). Most agents
 * never touch the index: when its bytes are exactly those the service sealed, and the branch
 * still names the commit it was built from, rebuilding it would write the same entries — so it
 * is kept, stat information and all.
 *
 * What was sealed is kept in this process's memory only, never in a file an agent could rewrite;
 * a worktree sealed by another process (a run adopting it after a crash) is rebuilt.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { readRefFileNow } from "../git/ref_files.ts";
import { readPlainFile } from "../git/plain_file.ts";
import type { TreeAdmin } from "../git/tree_admin.ts";

/** The index's SHA-256 and the commit it was built from, by the worktree's git directory. */
const sealed = new Map<string, { sha256: string; commit: string }>();
/** Seals kept at most (a container's worktree is sealed but never settled): the oldest go. */
const MAX_SEALS = 4096;

/** The SHA-256 of a plain index file (not a link, one name); undefined for anything else. */
function indexDigest(adminDir: string): string | undefined {
  // In place (lib/git/plain_file.ts): an index is kilobytes to a few megabytes in the page cache.
  const file = readPlainFile(join(adminDir, "index"));
  return file.kind === "plain" ? createHash("sha256").update(file.bytes).digest("hex") : undefined;
}

/** The commit the record's branch names in its loose ref file (read as data), if it is one. */
function branchCommit(record: TreeAdmin): string | undefined {
  if (!record.head.startsWith("ref: refs/heads/")) return undefined;
  const ref = record.head.slice("ref: ".length);
  let at = record.common_dir;
  for (const part of ref.split("/").slice(0, -1)) { // no directory on the way may be a link
    at = join(at, part);
    try {
      const st = Deno.lstatSync(at);
      if (!st.isDirectory || st.isSymlink) return undefined;
    } catch {
      return undefined;
    }
  }
  const file = readRefFileNow(join(record.common_dir, ref));
  return file.kind === "commit" ? file.oid : undefined;
}

/**
 * Note the index of the worktree `record` describes, as it is now: call it with the seal, before
 * anything untrusted runs there. Nothing is noted when the branch is not a loose ref naming a
 * commit (the index is then always rebuilt).
 */
export function sealIndex(record: TreeAdmin): void {
  sealed.delete(record.admin_dir);
  const sha256 = indexDigest(record.admin_dir);
  const commit = branchCommit(record);
  if (sha256 && commit) sealed.set(record.admin_dir, { sha256, commit });
  while (sealed.size > MAX_SEALS) sealed.delete(sealed.keys().next().value!);
}

/**
 * True when the worktree's index is byte for byte the one {@link sealIndex} noted and its branch
 * still names the commit it named then: the index is then the service's and current. Answers
 * once per seal (a later settle rebuilds).
 */
export function indexUnchanged(record: TreeAdmin): boolean {
  const seal = sealed.get(record.admin_dir);
  if (!seal) return false;
  sealed.delete(record.admin_dir);
  const sha256 = indexDigest(record.admin_dir);
  const commit = branchCommit(record);
  return sha256 === seal.sha256 && commit === seal.commit;
}
