/**
 * How much of a captured patch the service stores and serves for review (pure). A patch larger
 * than anyone reviews — a 60 MB text file is a 60 MB patch — is cut at the end of the last whole
 * file that fits under the bound, so what is stored stays a valid `git diff` of its first files;
 * the `task_diff_captured` row then says how large the whole patch was and over how many files
 * (`truncated`), and the board says "diff too large to show". The stored bytes are still what
 * the row's `sha256`, `added`, `removed` and `files` describe (DESIGN.md §4, §6).
 */

/** Patch bytes stored for review at most (8 MiB: past that, a reviewer reads nothing more). */
export const MAX_SHOWN_PATCH_BYTES = 8 * 1024 * 1024;

/** Raw-listing bytes read past the patch's bound before the listing is given up on. */
export const RAW_LISTING_ALLOWANCE = 16 * 1024 * 1024;

/** What of a patch is stored: its bytes, and the whole patch's size when it was cut. */
export interface ShownPatch {
  bytes: Uint8Array;
  /** Present when cut: the whole patch's bytes (as git printed them) and its files. */
  truncated?: { bytes: number; files: number };
}

const FILE_HEADER = new TextEncoder().encode("\ndiff --git ");

/** Where the last file header starting before `end` starts (just past its `\n`); 0 if none. */
function lastFileBoundary(bytes: Uint8Array, end: number): number {
  for (let at = Math.min(end - 1, bytes.length - FILE_HEADER.length); at >= 0; at--) {
    let match = true;
    for (let i = 0; i < FILE_HEADER.length && match; i++) {
      match = bytes[at + i] === FILE_HEADER[i];
    }
    if (match) return at + 1;
  }
  return 0;
}

/**
 * The part of `patch` (the first bytes of a patch of `total` bytes over `files` files) stored for
 * review, under `max` bytes: all of it when it fits, else its whole files that do.
 */
export function shownPatch(
  patch: Uint8Array,
  whole: { total: number; files: number },
  max = MAX_SHOWN_PATCH_BYTES,
): ShownPatch {
  if (whole.total <= max && patch.length === whole.total) return { bytes: patch };
  // A line starting "diff --git " is a header: a hunk's lines start with " ", "+", "-" or "\\".
  const cut = lastFileBoundary(patch, max);
  return {
    bytes: patch.subarray(0, cut),
    truncated: { bytes: whole.total, files: whole.files },
  };
}
