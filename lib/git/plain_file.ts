/**
 * Reading the small files an agent can rewrite at any moment (a worktree's git administrative
 * files, ref files) in place on the event loop, without a race between looking and reading: the
 * file is opened with `O_NOFOLLOW` (a link is refused, never followed) and `O_NONBLOCK` (a FIFO
 * put there cannot hold the open or the read), and what was opened is then checked with `fstat`
 * — a regular file with one name — so a rename between a check and the read cannot slip another
 * file in. Each call is a few system calls on cached metadata (microseconds): the service makes
 * hundreds per task, and each one through Deno's blocking thread pool cost more CPU on the loop
 * than the call itself.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** How a file at a path is now, read as data. */
export type PlainFile =
  | {
    kind: "plain";
    bytes: Uint8Array;
    /** Device, inode, size, modification and change time: another file or a write changes it. */
    identity: string;
    /** The file's change time (ms since the epoch): any write or rename of it moves it. */
    changedMs: number;
  }
  | { kind: "missing" }
  | { kind: "other"; why: string };

/** Options of {@link readPlainFile}. */
export interface PlainFileOptions {
  /** Read the bytes (default); `false` only checks what the file is (`bytes` is then empty). */
  read?: boolean;
  /** Refuse a file longer than this many bytes (`other`). */
  maxBytes?: number;
  /** Take a file with other names too (read as data only, its bytes never trusted as a path). */
  hardLinks?: boolean;
  /** Follow a symbolic link to the file it names (git follows its configuration files' links). */
  followLinks?: boolean;
}

/**
 * The file at `path` when it is a regular file with one name (not a link, a directory, a FIFO, a
 * device or a hard link of another file): its bytes; else why not. Never blocks on what the
 * path holds and never follows a link in its last component.
 */
export function readPlainFile(path: string, options: PlainFileOptions = {}): PlainFile {
  let fd: number;
  try {
    fd = openSync(path, options.followLinks ? FLAGS : FLAGS | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "missing" };
    if (code === "ELOOP") return { kind: "other", why: "it is a symbolic link" };
    return { kind: "other", why: (e as Error).message };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { kind: "other", why: "it is not a regular file" };
    if (st.nlink > 1 && !options.hardLinks) {
      return { kind: "other", why: "it has other names (hard links)" };
    }
    if (options.maxBytes !== undefined && st.size > options.maxBytes) {
      return { kind: "other", why: `it is ${st.size} bytes long` };
    }
    const identity = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    const seen = { kind: "plain" as const, identity, changedMs: st.ctimeMs };
    if (options.read === false) return { ...seen, bytes: new Uint8Array() };
    return { ...seen, bytes: readAll(fd, st.size, options.maxBytes) };
  } catch (e) {
    return { kind: "other", why: (e as Error).message };
  } finally {
    closeSync(fd);
  }
}

/** Everything `fd` holds (it may have grown since its size was read), up to `maxBytes`. */
function readAll(fd: number, size: number, maxBytes: number | undefined): Uint8Array {
  let buf = new Uint8Array(Math.max(size, 64) + 1);
  let length = 0;
  for (;;) {
    if (length === buf.length) {
      const grown = new Uint8Array(buf.length * 2);
      grown.set(buf);
      buf = grown;
    }
    const n = readSync(fd, buf, length, buf.length - length, null);
    if (n === 0) return buf.subarray(0, length);
    length += n;
    if (maxBytes !== undefined && length > maxBytes) {
      throw new Error(`it grew beyond ${maxBytes} bytes while it was read`);
    }
  }
}

/** Kept: a byte-order mark is part of what git reads, so it is part of the text. */
const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** The text of a plain file at `path` ({@link readPlainFile}); undefined for anything else. */
export function plainFileText(path: string, maxBytes?: number): string | undefined {
  const file = readPlainFile(path, { maxBytes });
  return file.kind === "plain" ? UTF8.decode(file.bytes) : undefined;
}

/** True when `path` is a regular file with one name ({@link readPlainFile}), nothing read. */
export function isPlainFile(path: string): boolean {
  return readPlainFile(path, { read: false }).kind === "plain";
}

/**
 * The JSON of a small plain file ({@link readPlainFile}: no link followed, no FIFO waited on) an
 * agent could have rewritten; undefined when it is missing, not plain, over `maxBytes` or not JSON.
 * The caller still checks the shape: the value is anyone's.
 */
export function readPlainJson(path: string, maxBytes: number): unknown {
  const file = readPlainFile(path, { maxBytes });
  if (file.kind !== "plain") return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(file.bytes));
  } catch {
    return undefined;
  }
}
