/**
 * `git diff --raw -z --no-abbrev` read as the leaves a diff changes (pure), and the output of one
 * `git diff --raw -z --no-abbrev -p` split into that listing and the patch (issue 32: the captured
 * patch and the protected-paths judgement's listing were two git processes a task).
 *
 * git prints the raw records first, then — when a patch follows — one NUL, then the patch, whose
 * bytes are those of the same `git diff` without `--raw -z --no-abbrev` (those options change the
 * raw records only; lib/worktrees/diff_capture_test.ts proves it on hostile diffs). A record is
 * `:<old mode> <new mode> <old id> <new id> <status>` and its path, or two paths for a rename or a
 * copy (`R…`, `C…`), each NUL-terminated. A rename is listed as `--no-renames` lists it — its
 * source removed, its destination with the new entry — and a copy as its destination alone (its
 * source is listed on its own when it changed), so the listing is the same whatever rename
 * detection the configuration asks for.
 */

/**
 * One leaf a diff changes: its path, its mode and id on the tip's side (zeros: removed) and on
 * the base's side (zeros: added — as the destination of a rename or a copy is, the way
 * `--no-renames` lists it).
 */
export interface RawChange {
  path: string;
  mode: string;
  id: string;
  oldMode: string;
  oldId: string;
}

/** The raw output could not be read (never expected of git: the listing is then not trusted). */
export class RawListingError extends Error {
  constructor(at: number, why: string) {
    super(`unexpected \`git diff --raw -z\` output at byte ${at}: ${why}`);
    this.name = "RawListingError";
  }
}

const COLON = 0x3a;
const NUL = 0;
/** Paths are decoded as git's text output is elsewhere (an invalid byte becomes U+FFFD). */
const DECODER = new TextDecoder();

/** The next NUL-terminated field of `bytes` from `at`, and where the one after starts. */
function field(bytes: Uint8Array, at: number): [string, number] {
  const end = bytes.indexOf(NUL, at);
  if (end < 0) throw new RawListingError(at, "a field without its NUL");
  return [DECODER.decode(bytes.subarray(at, end)), end + 1];
}

/**
 * The raw records at the start of `bytes` (as {@link RawChange}s) and where they end: at the end
 * of `bytes`, or at the NUL that separates them from a patch (`next` is then past it).
 */
function readRecords(
  bytes: Uint8Array,
): { changes: RawChange[]; next: number; records: number } {
  const changes: RawChange[] = [];
  let at = 0;
  let records = 0;
  while (at < bytes.length && bytes[at] === COLON) {
    records++;
    const [meta, afterMeta] = field(bytes, at + 1);
    const [oldMode, mode, oldId, id, status] = meta.split(" ");
    if (mode === undefined || oldId === undefined || id === undefined || status === undefined) {
      throw new RawListingError(at, "a record without its five fields");
    }
    const [path, afterPath] = field(bytes, afterMeta);
    at = afterPath;
    if (status.startsWith("R") || status.startsWith("C")) {
      const [to, afterTo] = field(bytes, at);
      at = afterTo;
      const none = { mode: "0".repeat(6), id: "0".repeat(id.length) };
      // A rename removes its source; a copy leaves it as it was.
      if (status.startsWith("R")) changes.push({ path, ...none, oldMode, oldId });
      changes.push({ path: to, mode, id, oldMode: none.mode, oldId: none.id });
    } else {
      changes.push({ path, mode, id, oldMode, oldId });
    }
  }
  if (at === bytes.length) return { changes, next: at, records };
  if (bytes[at] !== NUL) {
    throw new RawListingError(at, "neither a record nor the patch's separator");
  }
  return { changes, next: at + 1, records };
}

/** The leaves `git diff --raw -z --no-abbrev` printed (renames and copies as described above). */
export function parseRawListing(bytes: Uint8Array): RawChange[] {
  const { changes, next } = readRecords(bytes);
  if (next !== bytes.length) throw new RawListingError(next, "output after the records");
  return changes;
}

/**
 * The output of `git diff --raw -z --no-abbrev -p …`: the leaves it lists, the patch's bytes, and
 * how many files the patch changes (one raw record each, a rename or a copy one).
 */
export function splitRawAndPatch(
  bytes: Uint8Array,
): { changes: RawChange[]; patch: Uint8Array; records: number } {
  const { changes, next, records } = readRecords(bytes);
  return { changes, patch: bytes.subarray(next), records };
}
