/**
 * The sizes of blobs, as git's objects record them (never as a file on disk or an agent says).
 *
 * A loose object is `zlib("<type> <size>\0<content>")` at `objects/<2 hex>/<rest>`: its first
 * few hundred bytes, inflated, name its type and size — exactly what `git cat-file
 * --batch-check` reads for a loose object (git does not inflate the content for it either). The
 * blobs a capture just wrote (`git add`, the agent's own commits) are loose, so a task's sizes
 * cost no git process. Whatever is not found loose (a packed object, one in an alternate store,
 * a repository that is not plain) is asked of one `git cat-file --batch-check`.
 */
import { join } from "node:path";
import { constants, inflateSync } from "node:zlib";
import { git } from "./git.ts";
import { plainRepository } from "./known_commits.ts";

/** How many ids were asked of `git cat-file --batch-check` (for tests and benchmarks). */
export const objectSizeCounts = { loose: 0, asked: 0 };

/** Compressed bytes read of a loose object: its header is inflated from these. */
const HEADER_BYTES = 256;
const ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** How long the open of a loose object may take before git is asked instead. */
const OPEN_LIMIT_MS = 5_000;

/** `path` opened for reading, or undefined when the open takes longer than `ms`. */
async function openWithin(path: string, ms: number): Promise<Deno.FsFile | undefined> {
  let timer: number | undefined;
  const opening = Deno.open(path, { read: true });
  const late = new Promise<undefined>((resolve) => timer = setTimeout(resolve, ms));
  try {
    const file = await Promise.race([opening, late]);
    // Opened after all (a writer came): closed, not leaked.
    if (!file) opening.then((f) => f.close(), () => {});
    return file;
  } finally {
    clearTimeout(timer);
  }
}

/** The size a loose blob's header names; undefined when it is not a plain loose blob here. */
async function looseBlobSize(objects: string, id: string): Promise<number | undefined> {
  const path = join(objects, id.slice(0, 2), id.slice(2));
  try {
    // A plain file only: a FIFO or a link planted there is asked of git instead (whose calls
    // have a time limit). One swapped in after this check would block the open: it is given up
    // on after OPEN_LIMIT_MS.
    if (!(await Deno.lstat(path)).isFile) return undefined;
    const file = await openWithin(path, OPEN_LIMIT_MS);
    if (!file) return undefined;
    const buf = new Uint8Array(HEADER_BYTES);
    let n: number | null;
    try {
      n = await file.read(buf);
    } finally {
      file.close();
    }
    if (!n) return undefined;
    const head = inflateSync(buf.subarray(0, n), {
      finishFlush: constants.Z_SYNC_FLUSH,
      maxOutputLength: 1 << 20,
    });
    const nul = head.indexOf(0);
    if (nul < 0) return undefined;
    const m = /^blob (0|[1-9][0-9]{0,15})$/.exec(new TextDecoder().decode(head.subarray(0, nul)));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined; // not loose (or unreadable): git answers
  }
}

/**
 * The sizes of the blobs `ids` in the repository at `cwd`, by id. An id that is not a blob there
 * is left out (a caller decides what an unknown size means).
 */
export async function blobSizes(
  cwd: string,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const unique = [...new Set(ids)].filter((id) => ID.test(id));
  if (unique.length === 0) return sizes;
  const dir = plainRepository(cwd);
  const objectDirMoved = (() => {
    try {
      return Deno.env.get("GIT_OBJECT_DIRECTORY") !== undefined;
    } catch {
      return true;
    }
  })();
  const rest: string[] = [];
  for (const id of unique) {
    const size = dir && !objectDirMoved ? await looseBlobSize(join(dir, "objects"), id) : undefined;
    if (size === undefined) rest.push(id);
    else {
      objectSizeCounts.loose++;
      sizes.set(id, size);
    }
  }
  if (rest.length === 0) return sizes;
  objectSizeCounts.asked += rest.length;
  const out = await git(
    ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
    { cwd, stdin: rest.join("\n") + "\n" },
  );
  for (const line of out.stdout.split("\n")) {
    const [id, type, size] = line.split(" ");
    if (type === "blob" && /^\d+$/.test(size ?? "")) sizes.set(id, Number(size));
  }
  return sizes;
}
