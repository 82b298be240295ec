/**
 * Git through `Deno.Command`: argv only (a shell only for {@link gitScript}'s constant scripts,
 * every value a quoted positional parameter there), a timeout and an AbortSignal on
 * every call (either kills git), a fixed environment (`GIT_TERMINAL_PROMPT=0`, `LC_ALL=C`) so
 * output is parseable and git never waits for a password, no hook and no fsmonitor on any call
 * (lib/git/hardened.ts), and a non-zero exit is a {@link GitError} unless the caller opts out
 * with `allowFailure`.
 *
 * Not dax: a landing runs a dozen git calls and a run hundreds, and dax's shell layer (an
 * environment copy per call, a spawn through node's child_process) made each call 3-5 times
 * slower: 100 `git rev-parse HEAD` one after another took 10-18 ms each through dax, 3-4 ms
 * each through `Deno.Command`, on the shared 2-core machine.
 */

import { readAllBytes, readBytesUpTo } from "../process/pipe_reader.ts";
import { configEnvironment, type HardenedValue, SERVICE_GIT_CONFIG } from "./hardened.ts";

/** Default time limit of one git call. */
const GIT_TIMEOUT_MS = 60_000;

const BASE_ENV = { GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", GIT_OPTIONAL_LOCKS: "0" };

/** An operator's own `GIT_CONFIG_COUNT` entries, kept ahead of the service's. */
function inheritedConfig(): Record<string, string | undefined> {
  try {
    return { GIT_CONFIG_COUNT: Deno.env.get("GIT_CONFIG_COUNT") };
  } catch {
    return {}; // no environment permission: none inherited
  }
}

/** Every call's environment: parseable output, no prompt, and lib/git/hardened.ts's config. */
const ENV: Record<string, string> = {
  ...BASE_ENV,
  ...configEnvironment(SERVICE_GIT_CONFIG, inheritedConfig()),
};

/** A git call failed: what ran, where, how it ended and what git said. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly cwd: string,
    readonly code: number,
    readonly stderr: string,
    readonly timedOut = false,
  ) {
    const why = timedOut ? "timed out" : `exited with ${code}`;
    super(`git ${args.join(" ")} (in ${cwd}) ${why}: ${stderr.trim() || "(no output)"}`);
    this.name = "GitError";
  }
}

/** Options of {@link git}. */
export interface GitOptions {
  /** Working directory (a repository or worktree). */
  cwd: string;
  /** Time limit in milliseconds; default {@link GIT_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Aborts the call (the process is killed). */
  signal?: AbortSignal;
  /** Extra environment variables on top of the inherited ones (never `GIT_CONFIG_*`: see `config`). */
  env?: Record<string, string>;
  /**
   * Configuration on top of lib/git/hardened.ts's {@link SERVICE_GIT_CONFIG} (command-line scope);
   * a function is asked right before git starts (a listing of the drivers to switch off must be
   * as fresh as the configuration git is about to read: lib/git/agent_tree.ts).
   */
  config?: readonly HardenedValue[] | (() => Promise<readonly HardenedValue[]>);
  /** Bytes written to standard input. */
  stdin?: string | Uint8Array;
  /** Return instead of throwing on a non-zero exit (a timeout still throws). */
  allowFailure?: boolean;
  /**
   * Keep at most this many bytes of standard output; the rest is read and counted
   * (`stdoutTotal`), never held (a diff larger than anyone reviews).
   */
  stdoutKeep?: number;
}

/** The result of one git call. */
export interface GitResult {
  code: number;
  /** Standard output as text (trailing newline kept). */
  stdout: string;
  /** Standard output as bytes (for diffs stored verbatim). */
  bytes: Uint8Array;
  stderr: string;
  /** How many bytes git printed on standard output, kept or not (with `stdoutKeep`). */
  stdoutTotal?: number;
}

/** Run `git <args>` in `options.cwd`. */
export function git(args: readonly string[], options: GitOptions): Promise<GitResult> {
  return run("git", args, args, options);
}

/**
 * Run a fixed POSIX `sh` script whose commands are git's, with every git call's environment,
 * time limit and signal (as {@link git}). `script` must be a constant: every value goes in
 * `args`, read there as `"$1"`, `"$2"`, … (always quoted), so no value is ever read as shell
 * syntax. For a chain of git calls each needing the one before, where a round trip through this
 * process per call costs more than the calls (lib/merge/merge_chain.ts).
 */
export function gitScript(
  name: string,
  script: string,
  args: readonly string[],
  options: GitOptions,
): Promise<GitResult> {
  return run("/bin/sh", ["-c", script, "sh", ...args], [`(${name})`, ...args], options);
}

/** Start `program` with git's environment; `args` name the call in a {@link GitError}. */
async function run(
  program: string,
  argv: readonly string[],
  args: readonly string[],
  options: GitOptions,
): Promise<GitResult> {
  const { cwd, signal } = options;
  // 130: ended by a signal before it ran (the shell convention for an interrupt).
  if (signal?.aborted) throw new GitError(args, cwd, 130, "aborted");
  const stdin = typeof options.stdin === "string"
    ? new TextEncoder().encode(options.stdin)
    : options.stdin;
  const config = typeof options.config === "function" ? await options.config() : options.config;
  const env = environment(options.env, config);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args: [...argv],
      cwd,
      env,
      stdin: stdin ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    // A missing cwd or a missing git: nothing ran (127, as a shell says for "not found").
    throw new GitError(args, cwd, 127, `git or ${cwd} not found: ${e}`);
  }
  let timedOut = false;
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, options.timeoutMs ?? GIT_TIMEOUT_MS);
  signal?.addEventListener("abort", kill, { once: true });
  let output: { code: number; stdout: Uint8Array; stderr: Uint8Array; total?: number };
  try {
    // Read through PipeReader, not `child.output()`: that leaves a 64 KiB buffer per read behind.
    const keep = options.stdoutKeep;
    const collected = Promise.all([
      keep === undefined
        ? readAllBytes(child.stdout).then((bytes) => ({ bytes, total: undefined }))
        : readBytesUpTo(child.stdout, keep),
      readAllBytes(child.stderr),
      child.status,
    ]).then(([out, stderr, status]) => ({
      code: status.code,
      stdout: out.bytes,
      stderr,
      total: out.total,
    }));
    if (stdin) {
      // Written while the output is read, so a large input cannot deadlock on a full pipe.
      const writer = child.stdin.getWriter();
      await writer.write(stdin).catch(() => {}); // git may exit without reading it all
      await writer.close().catch(() => {});
    }
    output = await collected;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", kill);
  }
  const stderr = new TextDecoder().decode(output.stderr);
  if (timedOut) throw new GitError(args, cwd, output.code, stderr, true);
  if (signal?.aborted) throw new GitError(args, cwd, output.code, stderr || "aborted");
  const bytes = output.stdout;
  const out: GitResult = {
    code: output.code,
    bytes,
    stdout: new TextDecoder().decode(bytes),
    stderr,
    ...(output.total === undefined ? {} : { stdoutTotal: output.total }),
  };
  if (output.code !== 0 && !options.allowFailure) {
    throw new GitError(args, cwd, output.code, stderr);
  }
  return out;
}

/** The environment of one call: {@link ENV}, the caller's variables and its extra config. */
function environment(
  vars: Record<string, string> | undefined,
  config: readonly HardenedValue[] | undefined,
): Record<string, string> {
  if (!vars && !config?.length) return ENV;
  const env = { ...ENV, ...vars };
  if (vars && Object.keys(vars).some((k) => k.startsWith("GIT_CONFIG_"))) {
    throw new RangeError("git(): pass configuration as options.config, not GIT_CONFIG_* variables");
  }
  if (config?.length) {
    Object.assign(env, configEnvironment([...SERVICE_GIT_CONFIG, ...config], inheritedConfig()));
  }
  return env;
}

/** Run git and return its standard output without the trailing newline. */
export async function gitText(args: readonly string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.replace(/\n$/, "");
}

/** Split `-z` output into its entries (empty trailing entries dropped). */
export function splitZ(text: string): string[] {
  const parts = text.split("\0");
  while (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * The full ref of a target: a branch name (`main`) is `refs/heads/main`; a full ref (the
 * remote-tracking `refs/remotes/origin/main` that pull-request landing targets) stays as it is.
 */
export function targetRef(target: string): string {
  return target.startsWith("refs/") ? target : `refs/heads/${target}`;
}

/** The commit id `rev` names, or undefined when it names no commit. */
export async function resolveCommit(
  rev: string,
  options: GitOptions,
): Promise<string | undefined> {
  const r = await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], {
    ...options,
    allowFailure: true,
  });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/**
 * Environment that gives the service's own commits (partial work, merges) an identity when the
 * repository has none configured, and never signs or runs hooks interactively.
 */
const SERVICE_IDENTITY: Record<string, string> = {
  GIT_AUTHOR_NAME: "service",
  GIT_AUTHOR_EMAIL: "service@localhost",
  GIT_COMMITTER_NAME: "service",
  GIT_COMMITTER_EMAIL: "service@localhost",
};

const identities = new Map<string, Promise<Record<string, string>>>();

/** Identity environment for commits in `cwd`: empty when git already knows who commits. */
export function commitIdentity(cwd: string): Promise<Record<string, string>> {
  let found = identities.get(cwd);
  if (!found) {
    found = git(["var", "GIT_COMMITTER_IDENT"], { cwd, allowFailure: true })
      .then((r) => (r.code === 0 ? {} : SERVICE_IDENTITY));
    identities.set(cwd, found);
  }
  return found;
}
