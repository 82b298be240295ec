/**
 * A `git config` question the service asks again and again (the drivers an agent's tree defines,
 * lib/git/driver_listing.ts; the user's excludes file, lib/worktrees/ignores.ts) — answered from
 * memory while every configuration file git would read is byte for byte, inode and change time
 * what it was when git last answered (issue 32: each answer was a git process per step or task).
 *
 * An answer is kept only when nothing could have changed during git's own read: the files are
 * looked at before and after it and must be the same, and each must have last changed more than
 * {@link RACY_MS} before the call began (git's "racily clean" rule: the kernel stamps a write
 * with a clock a tick behind, and Deno reports change times in whole seconds, so a write during
 * the call shows as a later change time than any kept one) — or, changed more recently, not hold
 * any word of the question's {@link ConfigQuestion.mentions} in any case, so that whatever git
 * read there, it set nothing the answer could lack. It is never kept when a file holds the word
 * `include` (an included file is not among those looked at), when git names a source other than
 * those files, or when the system configuration's path is unknown. Every later call looks at the
 * files again, in place (microseconds), and asks git whenever anything differs.
 *
 * An agent's tree has configuration files of its own (`config.worktree` in its git directory,
 * which the service writes for each new worktree). A file that holds neither a word of the
 * question's {@link ConfigQuestion.mentions} nor `include` can set nothing the answer holds and
 * makes git read no other file, so an answer kept for one tree of a repository whose own files
 * were all such files (or missing) also answers another tree of it whose own files are too, while
 * the files they share stand: a new worktree's first step asks no `git config`.
 */
import { join, resolve } from "node:path";
import { git, GitError, splitZ } from "./git.ts";
import type { HardenedValue } from "./hardened.ts";
import { readPlainFile } from "./plain_file.ts";

/**
 * A file changed this recently (ms) is not trusted to show a change during the call: Deno's
 * change times are whole seconds, the kernel's clock a tick behind.
 */
export const RACY_MS = 1_250;
/** Answers kept at most (one per place and question); the oldest go. */
const MAX_KEPT = 1024;
/** Configuration files are small; a larger one is not kept in memory (asked every time). */
const MAX_BYTES = 1 << 20;

/** A question to `git config`, asked with `-z --show-origin`. */
export interface ConfigQuestion {
  /** The arguments after `config -z --show-origin` (`--get <key>`, `--get-regexp <re>` …). */
  args: readonly string[];
  /** A file changed within the racy window is trusted only when it holds none of these words. */
  mentions: RegExp;
  /** `-c` settings git runs with (lib/git/hardened.ts), part of the question. */
  config?: readonly HardenedValue[];
  /** Counted here: how many answers were asked of git and how many came from memory. */
  counts: { asked: number; remembered: number };
}

/** Git's answer: each value with the source git names for it (`file:<path>`, `command line:`). */
export interface ConfigAnswer {
  origins: string[];
  values: string[];
}

/** Options of {@link askConfig}. */
export interface RememberedConfigOptions {
  /**
   * The environment git gets. Answers are kept for an agent's tree (`GIT_DIR` and
   * `GIT_COMMON_DIR` pinned, absolute) or a checkout's top directory; anything else asks git.
   */
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** The racy window in ms, for tests (default {@link RACY_MS}). */
  racyMs?: number;
}

/** One configuration file as it was seen. */
interface Seen {
  path: string;
  /** `missing`, or the file's identity (device, inode, size, times); `other` for a non-file. */
  state: string;
  bytes?: Uint8Array;
  changedMs?: number;
}

interface Kept {
  files: Seen[];
  answer: ConfigAnswer;
}

const kept = new Map<string, Kept>();
/** Answers that hold for every tree of a repository whose own files are inert (see above). */
const shared = new Map<string, Kept>();

/**
 * Git's answer to `question` in `cwd` with `options.env` (exit code 1, nothing set, is an empty
 * answer), from memory while the configuration files git reads there stand as they were.
 */
export async function askConfig(
  cwd: string,
  question: ConfigQuestion,
  options: RememberedConfigOptions = {},
): Promise<ConfigAnswer> {
  const env = options.env ?? {};
  let ownEnv: Record<string, string>;
  try {
    ownEnv = processEnv(); // read once for all three: the files git reads and the answers' keys
  } catch {
    return await askGit(cwd, question, options); // no permission to read it: nothing is kept
  }
  const found = await configFiles(cwd, env, ownEnv);
  const key = found && cacheKey(cwd, env, question, ownEnv);
  if (found && key) {
    const { all: files, own } = found;
    const processVars = ownEnv;
    const start = Date.now(); // before the first look: a write after it is after `start`
    const before = files.map(look);
    const known = kept.get(key);
    if (known && sameFiles(known.files, before)) {
      question.counts.remembered++;
      return known.answer;
    }
    const ownInert = (seen: Seen[]) =>
      seen.every((f) => !own.includes(f.path) || inert(f, question.mentions));
    const notOwn = (seen: Seen[]) => seen.filter((f) => !own.includes(f.path));
    const shareKey = own.length > 0 ? sharedKey(env, question, processVars) : undefined;
    const common = shareKey === undefined ? undefined : shared.get(shareKey);
    if (common && sameFiles(common.files, notOwn(before)) && ownInert(before)) {
      question.counts.remembered++;
      return common.answer;
    }
    const answer = await askGit(cwd, question, options);
    const after = files.map(look);
    kept.delete(key);
    const racyMs = options.racyMs ?? RACY_MS;
    if (keepable({ before, after, answer, cwd, start, racyMs, mentions: question.mentions })) {
      remember(kept, key, { files: after, answer });
      if (shareKey !== undefined && ownInert(after)) {
        remember(shared, shareKey, { files: notOwn(after), answer });
      }
    }
    return answer;
  }
  return await askGit(cwd, question, options);
}

/** Keep `value` under `key`, the oldest going past {@link MAX_KEPT}. */
function remember(map: Map<string, Kept>, key: string, value: Kept): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > MAX_KEPT) map.delete(map.keys().next().value!);
}

/** A file that can set nothing `mentions` names and makes git read no other: missing, or one without those words. */
function inert(f: Seen, mentions: RegExp): boolean {
  if (f.state === "missing") return true;
  if (f.state === "other" || !f.bytes) return false;
  const text = new TextDecoder().decode(f.bytes);
  return !/include/i.test(text) && !new RegExp(mentions.source, "i").test(text);
}

/** `git config -z --show-origin <question>`: the values and where each was set. */
async function askGit(
  cwd: string,
  question: ConfigQuestion,
  options: RememberedConfigOptions,
): Promise<ConfigAnswer> {
  question.counts.asked++;
  const listed = await git(["config", "-z", "--show-origin", ...question.args], {
    cwd,
    env: options.env,
    config: question.config,
    signal: options.signal,
    allowFailure: true,
  });
  // 1: no such key.
  if (listed.code !== 0 && listed.code !== 1) {
    throw new GitError(["config", ...question.args], cwd, listed.code, listed.stderr);
  }
  const fields = splitZ(listed.stdout);
  return {
    origins: fields.filter((_, i) => i % 2 === 0),
    values: fields.filter((_, i) => i % 2 === 1),
  };
}

/** Whether an answer may be kept: see the module's comment. */
function keepable(o: {
  before: Seen[];
  after: Seen[];
  answer: ConfigAnswer;
  cwd: string;
  start: number;
  racyMs: number;
  mentions: RegExp;
}): boolean {
  const { before, after, cwd, start } = o;
  if (!sameFiles(before, after)) return false;
  for (const f of after) {
    if (f.state === "missing") continue;
    if (f.state === "other" || !f.bytes || f.changedMs === undefined) return false;
    const text = new TextDecoder().decode(f.bytes);
    if (/include/i.test(text)) return false;
    const racy = f.changedMs >= start - o.racyMs;
    if (racy && new RegExp(o.mentions.source, "i").test(text)) return false;
  }
  const known = new Set(after.map((f) => f.path));
  return o.answer.origins.every((origin) =>
    origin === "command line:" ||
    (origin.startsWith("file:") && known.has(resolve(cwd, origin.slice(5))))
  );
}

/** The same files, as they were: identities and bytes. */
function sameFiles(a: Seen[], b: Seen[]): boolean {
  return a.length === b.length && a.every((f, i) => {
    const g = b[i];
    if (f.path !== g.path || f.state !== g.state) return false;
    if (!f.bytes || !g.bytes) return f.bytes === g.bytes;
    return f.bytes.length === g.bytes.length && f.bytes.every((byte, j) => byte === g.bytes![j]);
  });
}

/** One file, now, in place (a link followed as git follows it; a FIFO never waited on). */
function look(path: string): Seen {
  const file = readPlainFile(path, { followLinks: true, hardLinks: true, maxBytes: MAX_BYTES });
  if (file.kind === "missing") return { path, state: "missing" };
  if (file.kind === "other") return { path, state: "other" };
  return { path, state: file.identity, bytes: file.bytes, changedMs: file.changedMs };
}

/** Variables of the service's own environment that choose what configuration git reads. */
function processEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  // Sorted: the order Deno lists the environment in changes from call to call.
  for (const [k, v] of Object.entries(Deno.env.toObject()).sort(([a], [b]) => a < b ? -1 : 1)) {
    if (k.startsWith("GIT_") || k === "HOME" || k === "XDG_CONFIG_HOME") out[k] = v;
  }
  return out;
}

/**
 * The key of an answer: the question, where git runs and every variable that picks its files
 * (`processVars`: the service's own, {@link processEnv}).
 */
function cacheKey(
  cwd: string,
  env: Record<string, string>,
  question: ConfigQuestion,
  processVars: Record<string, string>,
): string {
  const sorted = Object.entries(env).sort(([a], [b]) => a < b ? -1 : 1);
  return JSON.stringify([
    question.args,
    (question.config ?? []).map((c) => [c.key, c.value]),
    cwd,
    sorted,
    processVars,
  ]);
}

/**
 * The key of an answer shared by a repository's trees: the question, the pinned common
 * directory and every variable that picks the files, but not the tree's own `GIT_DIR` and
 * `GIT_WORK_TREE` (git's discovery is off, so the working directory picks nothing either).
 */
function sharedKey(
  env: Record<string, string>,
  question: ConfigQuestion,
  processVars: Record<string, string>,
): string {
  const rest = Object.entries(env).filter(([k]) => k !== "GIT_DIR" && k !== "GIT_WORK_TREE");
  return cacheKey("", Object.fromEntries(rest), question, processVars);
}

/** The git directories of a call: pinned by `env`, or a checkout's own `.git` directory. */
function gitDirs(
  cwd: string,
  env: Record<string, string>,
  all: Record<string, string>,
): { gitDir: string; commonDir: string } | undefined {
  if (env.GIT_DIR?.startsWith("/") && env.GIT_COMMON_DIR?.startsWith("/")) {
    return { gitDir: env.GIT_DIR, commonDir: env.GIT_COMMON_DIR };
  }
  // Found by git's discovery: only in a checkout's top directory, with nothing set that moves it.
  if (all.GIT_DIR || all.GIT_COMMON_DIR || all.GIT_WORK_TREE || !cwd.startsWith("/")) return;
  const dotGit = join(cwd, ".git");
  try {
    const st = Deno.lstatSync(dotGit);
    if (!st.isDirectory || st.isSymlink) return undefined;
  } catch {
    return undefined;
  }
  // A `commondir` there would move the repository's configuration elsewhere.
  if (look(join(dotGit, "commondir")).state !== "missing") return undefined;
  return { gitDir: dotGit, commonDir: dotGit };
}

/**
 * Every file git 2.x reads configuration from in `cwd`: the system file, the global ones, the
 * repository's and the worktree's own — for an agent's tree (whose `GIT_DIR` and
 * `GIT_COMMON_DIR` are pinned) or a checkout's top directory. Undefined (nothing kept) for any
 * other call, or when the system file's path is unknown. `own`: those of a tree whose git
 * directory is not the repository's (its `config` and `config.worktree`).
 */
async function configFiles(
  cwd: string,
  env: Record<string, string>,
  processVars: Record<string, string>,
): Promise<{ all: string[]; own: string[] } | undefined> {
  const all = { ...processVars, ...env };
  const dirs = gitDirs(cwd, env, all);
  if (!dirs) return undefined;
  const { gitDir, commonDir } = dirs;
  const system = await systemConfigPath();
  if (!system) return undefined;
  const home = all.HOME ?? "";
  const xdg = all.XDG_CONFIG_HOME || join(home, ".config");
  const globals = all.GIT_CONFIG_GLOBAL
    ? [all.GIT_CONFIG_GLOBAL]
    : [join(xdg, "git", "config"), join(home, ".gitconfig")];
  const outside = [
    all.GIT_CONFIG_SYSTEM || system,
    ...globals.map((p) => resolve(p)),
    join(commonDir, "config"),
  ];
  const inTree = [join(gitDir, "config"), join(gitDir, "config.worktree")];
  const files = [
    ...new Set([...outside, ...inTree, join(commonDir, "commondir")]), // commondir: see gitDirs
  ];
  // The tree's own: in its git directory when that is not the repository's, and nothing else.
  const own = gitDir === commonDir ? [] : inTree.filter((p) => !outside.includes(p));
  return { all: files, own };
}

let systemPath: Promise<string | undefined> | undefined;

/**
 * Where this git reads its system configuration (a build-time path): git itself prints it when
 * asked to edit that file with `echo` as the editor (`GIT_EDITOR` beats any configured editor).
 */
function systemConfigPath(): Promise<string | undefined> {
  systemPath ??= git(["config", "--system", "--edit"], {
    cwd: "/",
    env: { GIT_EDITOR: "echo" },
    allowFailure: true,
    timeoutMs: 10_000,
  }).then((r) => {
    const path = r.stdout.trim();
    return r.code === 0 && path.startsWith("/") && !path.includes("\n") ? path : undefined;
  }, () => undefined);
  return systemPath;
}
