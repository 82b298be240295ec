/**
 * Checks made before an agent is spawned (spec §7.3): the binary resolves by a PATH lookup and is
 * executable, the work directory is writable, and a provider key is set.
 *
 * Key rule: any one of the adapter's `apiKeyEnv` variables, non-empty, is enough. When one of the
 * adapter's gateway endpoint variables is set (e.g. `ANTHROPIC_BASE_URL` for claude), the gateway
 * key variables (`ANTHROPIC_AUTH_TOKEN`) are accepted instead, because local gateways and proxies
 * authenticate with a bearer token rather than a provider key. Otherwise the agent is refused.
 */
import { delimiter, isAbsolute, join } from "node:path";
import type { AgentAdapter, HeadlessProblem } from "./adapters/types.ts";
import { RuntimeError } from "./errors.ts";

/** Options of `preflight`. */
export interface PreflightOptions {
  /** The environment the agent would get its keys from (usually the service's). */
  env: Record<string, string>;
  /** Directory a relative binary path (`./bin/agent`) is resolved against (the workspace). */
  cwd?: string;
  /** Working directory that must be writable (the worktree); skipped when absent. */
  workdir?: string;
  /** Operating system; default the host's. */
  os?: typeof Deno.build.os;
  /** Receives warnings (the API-key warning) before the refusal; default `console.warn`. */
  warn?: (message: string) => void;
}

/** What preflight found. */
export interface PreflightResult {
  /** Absolute path of the binary. */
  binaryPath: string;
  /** The command and leading arguments to launch it (a Windows batch shim runs through cmd.exe). */
  launch: { command: string; prefixArgs: string[] };
}

/** The API-key warning for `adapter` under `env`, or undefined when a key is set. Pure. */
export function missingApiKey(
  adapter: AgentAdapter,
  env: Record<string, string>,
): string | undefined {
  if (adapter.apiKeyEnv.length === 0) return undefined;
  const set = (k: string) => (env[k] ?? "") !== "";
  if (adapter.apiKeyEnv.some(set)) return undefined;
  for (const [endpoint, keys] of Object.entries(adapter.gatewayKeyEnv ?? {})) {
    if (set(endpoint) && keys.some(set)) return undefined;
  }
  return `API key not set: ${adapter.apiKeyEnv[0]} (set it for the ${adapter.name} adapter)`;
}

/**
 * Why `adapter` would fail to start headless under `env` although its key is set (auth
 * selection, endpoint, trust: the adapter's own `headlessProblem`), or undefined. Pure.
 */
export function headlessProblem(
  adapter: AgentAdapter,
  env: Record<string, string>,
): HeadlessProblem | undefined {
  const found = adapter.headlessProblem?.(env);
  return found && { ...found, problem: `${adapter.name} cannot start headless: ${found.problem}` };
}

/** How to set a key `adapter` accepts (the fix of the API-key refusal). Pure. */
export function keyFix(adapter: AgentAdapter): string {
  const parts = [`export ${adapter.apiKeyEnv[0]}=…`];
  if (adapter.apiKeyEnv.length > 1) {
    parts.push(`or one of ${adapter.apiKeyEnv.slice(1).join(", ")}`);
  }
  for (const [endpoint, keys] of Object.entries(adapter.gatewayKeyEnv ?? {})) {
    parts.push(`with ${endpoint} set, ${keys.join(" or ")} is accepted`);
  }
  return parts.join("; ");
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/**
 * Resolve `binary` by a PATH lookup (a name with a path separator is taken as is). On Windows
 * each `PATHEXT` extension is tried. Returns undefined when nothing is found.
 */
export async function resolveBinary(
  binary: string,
  env: Record<string, string>,
  os: typeof Deno.build.os = Deno.build.os,
): Promise<string | undefined> {
  const windows = os === "windows";
  const exts = windows
    ? ["", ...(env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)]
    : [""];
  const candidates =
    binary.includes("/") || (windows && binary.includes("\\")) || isAbsolute(binary)
      ? [binary]
      : (env.PATH ?? env.Path ?? "").split(windows ? ";" : delimiter).filter(Boolean).map((d) =>
        join(d, binary)
      );
  for (const c of candidates) {
    for (const ext of exts) if (await isFile(c + ext)) return c + ext;
  }
  return undefined;
}

async function isExecutable(path: string, os: typeof Deno.build.os): Promise<boolean> {
  if (os === "windows") return true;
  const mode = (await Deno.stat(path)).mode ?? 0o755;
  return (mode & 0o111) !== 0;
}

async function assertWritable(dir: string): Promise<void> {
  const probe = join(dir, `.service-write-probe-${crypto.randomUUID().slice(0, 8)}`);
  try {
    await Deno.writeTextFile(probe, "", { createNew: true });
    await Deno.remove(probe);
  } catch (e) {
    if (e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.NotFound) {
      throw new RuntimeError(
        `Permission denied: ${dir}`,
        `make the work directory writable (chmod u+w ${dir}) or check its owner`,
        126,
      );
    }
    throw e;
  }
}

/**
 * The key and headless checks of {@link preflight} alone (an agent in a container has its CLI in
 * the image, not on the host): after warning `API key not set: <VAR> …`, throws
 * `RuntimeError: API key not set: …`, or the adapter's headless problem.
 */
export function preflightKeys(
  adapter: AgentAdapter,
  options: Pick<PreflightOptions, "env" | "warn">,
): void {
  const warning = missingApiKey(adapter, options.env);
  if (warning) {
    (options.warn ?? console.warn)(warning);
    throw new RuntimeError(warning, keyFix(adapter), 1);
  }
  const problem = headlessProblem(adapter, options.env);
  if (problem) throw new RuntimeError(problem.problem, problem.fix, 1);
}

/**
 * Check that `adapter` can run: throws `RuntimeError: binary not found in PATH: <bin>` (127),
 * `RuntimeError: Permission denied: <path>` (126), or, after warning `API key not set: <VAR> …`,
 * `RuntimeError: API key not set: …` (exit 1).
 */
export async function preflight(
  adapter: AgentAdapter,
  options: PreflightOptions,
): Promise<PreflightResult> {
  const os = options.os ?? Deno.build.os;
  // A relative path with a directory part (`./bin/agent`) is relative to the workspace.
  const binary = options.cwd && adapter.binary.includes("/") && !isAbsolute(adapter.binary)
    ? join(options.cwd, adapter.binary)
    : adapter.binary;
  const binaryPath = await resolveBinary(binary, options.env, os);
  if (!binaryPath) {
    throw new RuntimeError(
      `binary not found in PATH: ${adapter.binary}`,
      `install the ${adapter.name} CLI or add its directory to PATH`,
      127,
    );
  }
  if (!(await isExecutable(binaryPath, os))) {
    throw new RuntimeError(
      `Permission denied: ${binaryPath}`,
      `make it executable: chmod +x ${binaryPath}`,
      126,
    );
  }
  if (options.workdir) await assertWritable(options.workdir);
  preflightKeys(adapter, options);
  const shim = os === "windows" && /\.(cmd|bat)$/i.test(binaryPath);
  return {
    binaryPath,
    launch: shim
      ? { command: options.env.ComSpec ?? "cmd.exe", prefixArgs: ["/d", "/s", "/c", binaryPath] }
      : { command: binaryPath, prefixArgs: [] },
  };
}
