/**
 * Git through dax (`npm:dax-sh`): argv only (each argument escaped, never a shell string), a
 * timeout and an AbortSignal on every call, a fixed environment (`GIT_TERMINAL_PROMPT=0`,
 * `LC_ALL=C`) so output is parseable and git never waits for a password, and a non-zero exit is a
 * {@link GitError} unless the caller opts out with `allowFailure`.
 */
// dax is loaded at the first git command: a process that runs none (a board server) does not
// keep its ~12 MB.
let daxModule: Promise<typeof import("dax")> | undefined;
const loadDax = () => daxModule ??= import("dax");

/** Default time limit of one git call. */
const GIT_TIMEOUT_MS = 60_000;

const ENV = { GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", GIT_OPTIONAL_LOCKS: "0" };
/** dax's exit code for a command it ended at its `.timeout()`. */
const DAX_TIMED_OUT = 124;

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
  /** Extra environment variables on top of the inherited ones. */
  env?: Record<string, string>;
  /** Bytes written to standard input. */
  stdin?: string | Uint8Array;
  /** Return instead of throwing on a non-zero exit (a timeout still throws). */
  allowFailure?: boolean;
}

/** The result of one git call. */
export interface GitResult {
  code: number;
  /** Standard output as text (trailing newline kept). */
  stdout: string;
  /** Standard output as bytes (for diffs stored verbatim). */
  bytes: Uint8Array;
  stderr: string;
}

// dax looks a bare command name up on PATH at every call (a few ms of stats); git's path is
// resolved once per PATH value instead, which keeps git-heavy paths as fast as Deno.Command.
const gitPaths = new Map<string, Promise<string>>();
function gitBinary(): Promise<string> {
  const path = Deno.env.get("PATH") ?? "";
  let found = gitPaths.get(path);
  if (!found) {
    found = loadDax().then(({ default: $ }) => $.which("git")).then((p) => p ?? "git");
    gitPaths.set(path, found);
  }
  return found;
}

/** Run `git <args>` in `options.cwd`. */
export async function git(args: readonly string[], options: GitOptions): Promise<GitResult> {
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  // 130: ended by a signal before it ran (the shell convention for an interrupt).
  if (options.signal?.aborted) throw new GitError(args, options.cwd, 130, "aborted");
  const { default: $, KillController } = await loadDax();
  if (options.signal?.aborted) throw new GitError(args, options.cwd, 130, "aborted");
  const abort = new KillController();
  const onAbort = () => abort.kill("SIGKILL");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const stdin = typeof options.stdin === "string"
    ? new TextEncoder().encode(options.stdin)
    : options.stdin ?? "null";
  const started = performance.now();
  let result;
  try {
    result = await $`${await gitBinary()} ${[...args]}`
      .cwd(options.cwd)
      .env(options.env ? { ...ENV, ...options.env } : ENV)
      .stdin(stdin)
      .quiet()
      .noThrow()
      .timeout(timeoutMs)
      .signal(abort.signal);
  } catch (e) {
    // dax refuses a missing cwd before spawning (git itself missing comes back as exit 127).
    throw new GitError(args, options.cwd, 127, `git or ${options.cwd} not found: ${e}`);
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  const stderr = result.stderr;
  if (options.signal?.aborted) throw new GitError(args, options.cwd, result.code, stderr);
  if (result.code === DAX_TIMED_OUT && performance.now() - started >= timeoutMs) {
    throw new GitError(args, options.cwd, result.code, stderr, true);
  }
  const bytes = result.stdoutBytes;
  const out = { code: result.code, bytes, stdout: result.stdout, stderr };
  if (result.code !== 0 && !options.allowFailure) {
    throw new GitError(args, options.cwd, result.code, stderr);
  }
  return out;
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
