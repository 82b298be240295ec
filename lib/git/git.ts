/**
 * A small git runner over `Deno.Command`: argv only (no shell), a timeout and an AbortSignal on
 * every call, a fixed environment (`GIT_TERMINAL_PROMPT=0`, `LC_ALL=C`) so output is parseable and
 * git never waits for a password, and a non-zero exit is a {@link GitError} unless the caller opts
 * out with `allowFailure`.
 */

/** Default time limit of one git call. */
export const GIT_TIMEOUT_MS = 60_000;

const ENV = { GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", GIT_OPTIONAL_LOCKS: "0" };
const decoder = new TextDecoder();

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

/** Run `git <args>` in `options.cwd`. */
export async function git(args: readonly string[], options: GitOptions): Promise<GitResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? GIT_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const command = new Deno.Command("git", {
    args: [...args],
    cwd: options.cwd,
    env: options.env ? { ...ENV, ...options.env } : ENV,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal,
  });
  let output: Deno.CommandOutput;
  try {
    if (options.stdin === undefined) {
      output = await command.output();
    } else {
      const child = command.spawn();
      const writer = child.stdin.getWriter();
      const data = typeof options.stdin === "string"
        ? new TextEncoder().encode(options.stdin)
        : options.stdin;
      await writer.write(data).finally(() => writer.close());
      output = await child.output();
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new GitError(args, options.cwd, 127, `git or ${options.cwd} not found: ${e.message}`);
    }
    throw e;
  }
  const stderr = decoder.decode(output.stderr);
  if (signal.aborted) {
    throw new GitError(args, options.cwd, output.code, stderr, timeout.aborted);
  }
  const result = {
    code: output.code,
    bytes: output.stdout,
    stdout: decoder.decode(output.stdout),
    stderr,
  };
  if (output.code !== 0 && !options.allowFailure) {
    throw new GitError(args, options.cwd, output.code, stderr);
  }
  return result;
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
export const SERVICE_IDENTITY: Record<string, string> = {
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
