/**
 * The digest a first read of a large, settled journal leaves to be taken after its answer
 * (`digestLater`, lib/journal/incremental.ts): the bytes were verified row by row and the chain
 * checked as they were read; only the fingerprint that lets a later read skip re-verifying them
 * waits. It is taken from the file again — 1 MiB per turn of the event loop, so requests are
 * answered in between — and only while the file is provably the one that was read.
 */
import { createHash } from "node:crypto";
import type { IncrementalJournal } from "./incremental.ts";
import { type FileIdentity, identityOf, sameIdentity } from "./file_identity.ts";
import { fileSource } from "./journal_file.ts";

/** Journals smaller than this are fingerprinted as they are read (it costs them nothing). */
export const LATER_DIGEST_MIN_BYTES = 4 << 20;

const CHUNK = 1 << 20;
const inProgress = new WeakSet<IncrementalJournal<unknown>>();

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Take the digest `view` waits for from the file at `path`, provided the open file has the
 * `identity` it had when it was read — an identity that had already settled then
 * (lib/journal/file_identity.ts) — both before and after hashing: any write in between would
 * have set a newer ctime, which no process can set back, so the bytes hashed are the bytes that
 * were verified. Resolves true when the view got its digest; otherwise the view's next read
 * starts over from row 0, as it would after any change. Never rejects.
 */
export async function takeDigestLater<S>(
  path: string,
  view: IncrementalJournal<S>,
  identity: FileIdentity,
): Promise<boolean> {
  if (inProgress.has(view)) return false;
  inProgress.add(view);
  try {
    await nextTurn(); // the answer that read was for goes out first
    const pending = view.pendingDigest();
    if (!pending) return false;
    const file = await Deno.open(path, { read: true });
    try {
      const unchanged = () => {
        const now = identityOf(file.statSync());
        return now !== undefined && sameIdentity(now, identity);
      };
      if (!unchanged()) return false;
      const source = fileSource(file, identity.size);
      const hasher = createHash("sha256");
      const buffer = new Uint8Array(CHUNK);
      for (let at = pending.start; at < pending.end;) {
        const n = source.readAt(at, buffer.subarray(0, Math.min(CHUNK, pending.end - at)));
        if (n === 0) return false;
        hasher.update(buffer.subarray(0, n));
        at += n;
        if (at < pending.end) await nextTurn();
      }
      return unchanged() && view.settleDigest(pending, hasher.digest("hex"));
    } finally {
      file.close();
    }
  } catch {
    return false; // the file went away: the view's next read starts over
  } finally {
    inProgress.delete(view);
  }
}
