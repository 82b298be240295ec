/**
 * Files too large to land unattended (`max_landed_file_mb`, DESIGN.md §18), decided on git's
 * listing of the captured diff and the sizes git's objects record (pure).
 *
 * A file counts when the diff leaves it a regular file over the limit that is new or larger than
 * it was: an added file, a grown file, or the destination of a rename or copy (the listing takes
 * these as additions, the way `--no-renames` does, whatever rename detection is configured).
 * Not counted: a file that shrank or kept its size, a removal, a link or a gitlink (no file with
 * a size: a link's blob is where it points, a gitlink is another repository's commit), and
 * content the base already held at a path this diff removes or changes — a move of an existing
 * file lands no new bytes. A size exactly at the limit is within it.
 */
import type { RawChange } from "../diff/raw_listing.ts";
import { MB } from "../util/size_words.ts";

/** One file over the limit: its path and its size in bytes on the tip's side. */
export interface OversizedFile {
  path: string;
  bytes: number;
}

/** `max_landed_file_mb` when service.yaml does not set it. */
export const DEFAULT_MAX_LANDED_FILE_MB = 10;

/** `max_landed_file_mb` in bytes; null when it is `off` (files of any size land). */
export function maxLandedFileBytes(mb: number | "off" | false): number | null {
  return typeof mb === "number" ? Math.floor(mb * MB) : null;
}

const REGULAR = /^100[0-7]{3}$/;

/** Whether a mode is a regular file's (not a link, a gitlink, a tree or nothing). */
export function isRegularFile(mode: string): boolean {
  return REGULAR.test(mode);
}

/** The blob ids whose sizes {@link oversizedFiles} needs first: what the diff leaves as files. */
export function newFileIds(changes: readonly RawChange[]): string[] {
  return changes.filter((c) => isRegularFile(c.mode)).map((c) => c.id);
}

/**
 * The base-side blob ids whose sizes decide whether a file over the limit grew: those of the
 * files `sizes` shows over `limit` that were files before.
 */
export function oldFileIds(
  changes: readonly RawChange[],
  sizes: ReadonlyMap<string, number>,
  limit: number | null,
): string[] {
  if (limit === null) return [];
  return changes.filter((c) =>
    isRegularFile(c.mode) && isRegularFile(c.oldMode) && (sizes.get(c.id) ?? Infinity) > limit
  ).map((c) => c.oldId);
}

/** Why a size could not be decided: the judgement is then an error and nothing lands unattended. */
export class UnknownSizeError extends Error {
  constructor(readonly path: string, readonly id: string) {
    super(`the size of ${JSON.stringify(path)} (blob ${id}) is not in git's objects`);
    this.name = "UnknownSizeError";
  }
}

/**
 * The files of `changes` over `limit` bytes (null: no limit) that are new or grew, in the
 * listing's order; `sizes` by blob id (both sides). Throws {@link UnknownSizeError} when a size
 * it needs is missing.
 */
export function oversizedFiles(
  changes: readonly RawChange[],
  sizes: ReadonlyMap<string, number>,
  limit: number | null,
): OversizedFile[] {
  if (limit === null) return [];
  // Content the base held at a path the diff removes or changes: moved, not added.
  const held = new Set(changes.filter((c) => isRegularFile(c.oldMode)).map((c) => c.oldId));
  const sizeOf = (path: string, id: string) => {
    const size = sizes.get(id);
    if (size === undefined) throw new UnknownSizeError(path, id);
    return size;
  };
  const out: OversizedFile[] = [];
  for (const c of changes) {
    if (!isRegularFile(c.mode) || held.has(c.id)) continue;
    const bytes = sizeOf(c.path, c.id);
    if (bytes <= limit) continue;
    const before = isRegularFile(c.oldMode) ? sizeOf(c.path, c.oldId) : 0;
    if (bytes > before) out.push({ path: c.path, bytes });
  }
  return out;
}
