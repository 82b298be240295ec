/**
 * Reading git's ref files that an agent wrote (its worktree's HEAD, the refs of a container's
 * session copy) as data, never as paths: a ref name is checked before it is joined to a
 * directory, no symbolic link is followed, a file is read only up to a few hundred bytes, and a
 * chain of symbolic refs ends after {@link MAX_DEPTH} steps. What cannot be read this way is
 * unusable, with the reason.
 */
import { join } from "node:path";
import { readPlainFile } from "./plain_file.ts";

/** A commit id (SHA-1 or SHA-256). */
export const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** How far a chain of symbolic refs is followed (git's own limit is 5). */
const MAX_DEPTH = 5;

/** Bytes of a ref file read at most (a ref is one line). */
const MAX_BYTES = 512;

/** What a HEAD or ref file says. */
export type RefFile =
  | { kind: "ref"; ref: string }
  | { kind: "commit"; oid: string }
  | { kind: "unusable"; why: string };

/**
 * True for a ref name the service follows: `refs/` and then components of letters, digits and
 * `._+@-`, none empty, none starting with `.`, none ending in `.lock`, no `..`, at most 255
 * characters. Stricter than git: whatever passes is a plain relative path under a refs
 * directory. Pure.
 */
export function isSafeRef(name: string): boolean {
  if (name.length > 255 || !name.startsWith("refs/")) return false;
  return name.split("/").every((c) =>
    /^[A-Za-z0-9_+@-][A-Za-z0-9._+@-]*$/.test(c) && !c.endsWith(".lock") && !c.includes("..")
  );
}

/** Parse a HEAD or loose ref file's text (pure). */
export function parseRefFile(text: string): RefFile {
  const line = text.replace(/\n$/, "");
  if (line.includes("\n")) return { kind: "unusable", why: "it holds more than one line" };
  if (OID.test(line)) return { kind: "commit", oid: line };
  if (line.startsWith("ref: ")) {
    const ref = line.slice(5);
    return isSafeRef(ref)
      ? { kind: "ref", ref }
      : { kind: "unusable", why: `it names ${JSON.stringify(ref.slice(0, 80))}, not a ref` };
  }
  return { kind: "unusable", why: "it is neither a commit id nor `ref: refs/…`" };
}

/**
 * Read the file at `path` as a ref file: a regular file (not a link), of at most a few hundred
 * bytes. Missing, a link, a directory or too long: unusable.
 */
export function readRefFile(path: string): Promise<RefFile> {
  return Promise.resolve(readRefFileNow(path));
}

/** {@link readRefFile}, in place (lib/git/plain_file.ts: no link followed, no FIFO waited on). */
export function readRefFileNow(path: string): RefFile {
  const file = readPlainFile(path, { maxBytes: MAX_BYTES, hardLinks: true });
  if (file.kind === "missing") return { kind: "unusable", why: "it is missing" };
  if (file.kind === "other") return { kind: "unusable", why: file.why };
  return parseRefFile(new TextDecoder().decode(file.bytes));
}

/** Whether the directories from `root` down to `rel`'s parent are real: ok, missing or a link. */
function pathBelow(root: string, rel: string): "ok" | "missing" | "link" {
  let at = root;
  for (const part of rel.split("/").slice(0, -1)) {
    at = join(at, part);
    let st: Deno.FileInfo | undefined;
    try {
      st = Deno.lstatSync(at);
    } catch {
      st = undefined;
    }
    if (!st) return "missing";
    if (st.isSymlink || !st.isDirectory) return "link";
  }
  return "ok";
}

/** Options of {@link resolveRef}. */
export interface ResolveOptions {
  /** The text of a `packed-refs` file consulted for refs with no loose file (a host file). */
  packedRefs?: string;
  /**
   * `false`: a symbolic ref is unusable, not followed (a ref it names could live in another
   * directory: a worktree's own `refs/worktree/…`).
   */
  followSymbolic?: false;
}

/**
 * The commit `ref` names in the ref directory `root` (a git directory's layout: `root/<ref>`),
 * following symbolic refs within `root`, never a link, never outside it. Unusable when the ref
 * is not there or cannot be read safely.
 */
export function resolveRef(
  root: string,
  ref: string,
  options: ResolveOptions = {},
): Promise<RefFile> {
  return resolveRefAt(root, ref, options, 0);
}

/** {@link resolveRef} `depth` symbolic refs down. */
async function resolveRefAt(
  root: string,
  ref: string,
  options: ResolveOptions,
  depth: number,
): Promise<RefFile> {
  if (depth >= MAX_DEPTH) return { kind: "unusable", why: `more than ${MAX_DEPTH} symbolic refs` };
  if (!isSafeRef(ref)) return { kind: "unusable", why: `${JSON.stringify(ref)} is not a ref` };
  const below = pathBelow(root, ref);
  if (below === "link") {
    return { kind: "unusable", why: `a directory on the way to ${ref} is a link or a file` };
  }
  const loose = below === "ok"
    ? readRefFileNow(join(root, ref))
    : { kind: "unusable" as const, why: "it is missing" };
  if (loose.kind === "ref" && options.followSymbolic === false) {
    return { kind: "unusable", why: `${ref} is a symbolic ref` };
  }
  if (loose.kind === "ref") return await resolveRefAt(root, loose.ref, options, depth + 1);
  if (loose.kind === "commit") return loose;
  if (loose.why !== "it is missing") return { kind: "unusable", why: `${ref}: ${loose.why}` };
  const line = options.packedRefs?.split("\n").find((l) => l.endsWith(` ${ref}`));
  const oid = line?.split(" ")[0];
  return oid && OID.test(oid)
    ? { kind: "commit", oid }
    : { kind: "unusable", why: `${ref} is not there` };
}
