/**
 * Gates evaluated on the tree a merge would produce (DESIGN.md §7): the candidate commit is
 * checked out in a temporary detached worktree `.sdd/worktrees/_gate-<id>`, the task's completion
 * signals and quality-gate commands run there, and the worktree is removed either way.
 */
import { join } from "node:path";
import { git } from "../git/git.ts";
import {
  type CompletionSignal,
  evaluateSignals,
  type SignalOptions,
  type SignalResult,
} from "../janitor/signals.ts";
import { workspacePaths } from "../workspace.ts";

/** What a task requires of the merged tree. */
export interface GateSpec {
  /** Completion signals (`path_exists`, `glob_exists`, `test_passes`). */
  signals?: CompletionSignal[];
  /** Quality-gate commands from the configuration (each must exit 0). */
  quality_gates?: string[];
}

/** The evidence of one gate evaluation. */
export interface GateResult {
  passed: boolean;
  /** The commit whose tree was evaluated. */
  commit: string;
  signals: SignalResult[];
  /** Fuzzy-path warnings (spec §4.5). */
  warnings: string[];
}

/** The checks of `gates` in evaluation order. */
function gateChecks(gates: GateSpec): CompletionSignal[] {
  return [
    ...(gates.signals ?? []),
    ...(gates.quality_gates ?? []).map((c) => ({ kind: "quality_gate" as const, detail: c })),
  ];
}

/**
 * Evaluate `gates` on `commit` in a temporary detached worktree of `root`. With no checks the
 * gate passes without a checkout.
 */
export async function evaluateGates(
  root: string,
  commit: string,
  gates: GateSpec,
  options: SignalOptions = {},
): Promise<GateResult> {
  const checks = gateChecks(gates);
  if (checks.length === 0) return { passed: true, commit, signals: [], warnings: [] };
  const id = crypto.randomUUID().slice(0, 12);
  const path = join(workspacePaths(root).worktrees, `_gate-${id}`);
  const o = { cwd: root, signal: options.signal };
  await git(["worktree", "add", "-q", "--detach", "--", path, commit], o);
  const warnings: string[] = [];
  try {
    const signals = await evaluateSignals(path, checks, {
      ...options,
      warn: (w) => {
        warnings.push(w);
        (options.warn ?? console.warn)(w);
      },
    });
    return { passed: signals.every((s) => s.passed), commit, signals, warnings };
  } finally {
    const removed = await git(["worktree", "remove", "--force", "--force", path], {
      cwd: root,
      allowFailure: true,
    });
    if (removed.code !== 0) {
      await Deno.remove(path, { recursive: true }).catch(() => {});
      await git(["worktree", "prune"], { cwd: root, allowFailure: true });
    }
  }
}
