/**
 * Completion-signal evaluation (spec §2.12, §4.5), used by the merge gates on the tree a merge
 * would produce:
 * - `path_exists`: a literal path must exist exactly; a path with glob characters is a glob;
 *   with `SERVICE_JANITOR_FUZZY_PATHS=1` a literal miss falls back to `**\/<stem>*<suffix>` and a
 *   success carries a warning naming the literal path, the pattern and the matched path.
 * - `glob_exists`: at least one path matches the glob.
 * - `test_passes` and quality gates: the literal command, run with `sh -c` in the tree, exits 0.
 */
import { join, normalize } from "node:path";
import type { Launcher } from "../process/launcher.ts";
import { runShell } from "../process/shell.ts";
import { fuzzyPattern, globToRegExp, hasGlobChars } from "./glob.ts";
import { shellExitWords } from "../util/signal_numbers.ts";

/** Kinds of checks a gate runs. */
export type SignalKind = "path_exists" | "glob_exists" | "test_passes" | "quality_gate";

/** One check: `detail` is the path, the glob or the command. */
export interface CompletionSignal {
  kind: SignalKind;
  detail: string;
  /** The name of a quality gate. */
  name?: string;
  /** Time limit of a command check, in seconds (default: the options' limit). */
  timeout_s?: number;
}

/** The evidence of one evaluated check. */
export interface SignalResult {
  kind: SignalKind;
  detail: string;
  /** The name of a quality gate. */
  name?: string;
  passed: boolean;
  /** A command's exit code (124 on timeout). */
  exit_code?: number;
  /** What was found, or the tail of the command's output. */
  output_tail: string;
  /** Paths that satisfied a path or glob check (sorted). */
  matched?: string[];
  /** Set when the fuzzy fallback decided the outcome. */
  warning?: string;
  duration_ms: number;
}

/** Options of {@link evaluateSignals}. */
export interface SignalOptions {
  /** Environment consulted for `SERVICE_JANITOR_FUZZY_PATHS` (default: the process's). */
  env?: Record<string, string | undefined>;
  /** Time limit of each command (default 10 minutes). */
  commandTimeoutMs?: number;
  signal?: AbortSignal;
  /** Extra environment of commands. */
  commandEnv?: Record<string, string>;
  /** Where commands run (default: host processes; a container under isolation: container). */
  launcher?: Launcher;
  /** Where warnings go (default `console.warn`); they are also returned on the result. */
  warn?: (message: string) => void;
}

/** Every file and directory under `dir` as `/`-separated relative paths, `.git` skipped, sorted. */
async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string) => {
    for await (const entry of Deno.readDir(rel === "" ? dir : join(dir, rel))) {
      if (rel === "" && entry.name === ".git") continue;
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      out.push(path);
      if (entry.isDirectory) await walk(path);
    }
  };
  await walk("");
  return out.sort();
}

/** Evaluate `signals` in the directory `dir`, in order; every signal is evaluated. */
export async function evaluateSignals(
  dir: string,
  signals: readonly CompletionSignal[],
  options: SignalOptions = {},
): Promise<SignalResult[]> {
  let tree: Promise<string[]> | undefined;
  const files = () => (tree ??= listTree(dir));
  const results: SignalResult[] = [];
  for (const signal of signals) {
    const started = performance.now();
    const result = await evaluateOne(dir, signal, files, options);
    results.push({ ...result, duration_ms: Math.round(performance.now() - started) });
    if (result.warning) (options.warn ?? console.warn)(result.warning);
  }
  return results;
}

type Evaluated = Omit<SignalResult, "duration_ms">;

async function evaluateOne(
  dir: string,
  signal: CompletionSignal,
  files: () => Promise<string[]>,
  options: SignalOptions,
): Promise<Evaluated> {
  const { kind, detail } = signal;
  if (kind === "test_passes" || kind === "quality_gate") {
    const timeoutMs = signal.timeout_s !== undefined
      ? signal.timeout_s * 1000
      : options.commandTimeoutMs;
    const r = await runShell(detail, {
      cwd: dir,
      timeoutMs,
      signal: options.signal,
      env: options.commandEnv,
      launcher: options.launcher,
    });
    const note = r.timed_out
      ? `\n[timed out after ${Math.round((timeoutMs ?? 600_000) / 1000)} s]`
      : r.code !== 0
      ? `\n[${shellExitWords(r.code)}]`
      : "";
    return {
      kind,
      detail,
      ...(signal.name !== undefined ? { name: signal.name } : {}),
      passed: r.code === 0,
      exit_code: r.code,
      output_tail: r.output_tail + note,
    };
  }
  if (kind === "glob_exists" || (kind === "path_exists" && hasGlobChars(detail))) {
    return globResult(signal, detail, await files());
  }
  if (kind !== "path_exists") {
    return { kind, detail, passed: false, output_tail: `unknown signal kind ${kind}` };
  }
  const rel = normalize(detail).replace(/^\.\//, "").replace(/\/+$/, "");
  if (rel.startsWith("/") || rel === ".." || rel.startsWith("../")) {
    return { kind, detail, passed: false, output_tail: `path ${detail} is outside the tree` };
  }
  const found = await Deno.lstat(join(dir, rel)).then(() => true, () => false);
  if (found) return { kind, detail, passed: true, output_tail: `found ${rel}`, matched: [rel] };
  const env = options.env ?? Deno.env.toObject();
  if (env.SERVICE_JANITOR_FUZZY_PATHS !== "1") {
    return { kind, detail, passed: false, output_tail: `${rel} does not exist` };
  }
  const pattern = fuzzyPattern(rel);
  const fuzzy = globResult(signal, pattern, await files());
  if (!fuzzy.passed) {
    return { ...fuzzy, output_tail: `${rel} does not exist; fuzzy ${fuzzy.output_tail}` };
  }
  const match = fuzzy.matched![0];
  const warning = `path_exists: literal path ${JSON.stringify(rel)} not found; ` +
    `fuzzy pattern ${JSON.stringify(pattern)} matched ${JSON.stringify(match)} ` +
    "(SERVICE_JANITOR_FUZZY_PATHS=1)";
  return { ...fuzzy, output_tail: warning, warning };
}

function globResult(signal: CompletionSignal, pattern: string, files: string[]): Evaluated {
  const re = globToRegExp(pattern);
  const matched = files.filter((f) => re.test(f))
    .sort((a, b) => a.split("/").length - b.split("/").length || (a < b ? -1 : a > b ? 1 : 0));
  const shown = matched.slice(0, 20).join("\n");
  return {
    kind: signal.kind,
    detail: signal.detail,
    passed: matched.length > 0,
    output_tail: matched.length > 0
      ? `pattern ${pattern} matched ${matched.length}:\n${shown}`
      : `pattern ${pattern} matched nothing`,
    matched,
  };
}
