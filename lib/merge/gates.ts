/**
 * Gates evaluated on the tree a merge would produce (DESIGN.md §7, §10): the candidate commit is
 * checked out in a temporary detached worktree `.sdd/worktrees/_gate-<id>` (given the worktree
 * environment's copies and links, §13), the task's completion signals and quality-gate commands
 * run there, then its evidence producers (whatever the gates said: a failing run is evidence
 * too), and the worktree is removed either way.
 */
import { gitWorktree } from "../git/worktree_admin.ts";
import { hardenedConfig } from "../git/agent_tree.ts";
import { join } from "node:path";
import type { CommandCheck } from "../config/schema.ts";
import { runShell } from "../process/shell.ts";
import {
  type CompletionSignal,
  evaluateSignals,
  type SignalOptions,
  type SignalResult,
} from "../janitor/signals.ts";
import { workspacePaths } from "../workspace.ts";
import type { TreeRunner } from "../container/tree_runner.ts";

/** What a task requires of the merged tree. */
export interface GateSpec {
  /** Completion signals (`path_exists`, `glob_exists`, `test_passes`). */
  signals?: CompletionSignal[];
  /** Quality gates from the configuration (each must exit 0). */
  quality_gates?: CommandCheck[];
  /** Evidence producers of the task, run after the gates; their outcome never gates. */
  evidence?: CommandCheck[];
  /**
   * Gives the checked-out tree what the task's worktree had from the checkout (the worktree
   * environment's copies and links, DESIGN.md §13) before anything runs there.
   */
  prepareTree?: (dir: string) => Promise<void>;
  /**
   * Where the commands run on the checked-out tree (absent: host processes); under
   * `isolation: container` a container of the agent image (lib/container/tree_runner.ts).
   */
  runIn?: (dir: string) => Promise<TreeRunner>;
}

/** Bytes of one producer's output kept as evidence. */
const PRODUCER_CAPTURE_BYTES = 16 << 20;

/** What an evidence producer did. */
export interface ProducerRun {
  name: string;
  command: string;
  exit_code: number;
  timed_out: boolean;
  /** stdout and stderr as captured, in arrival order. */
  output: Uint8Array;
  /** More than {@link PRODUCER_CAPTURE_BYTES} were written; the rest is not kept. */
  truncated: boolean;
  duration_ms: number;
}

/** The evidence of one gate evaluation. */
export interface GateResult {
  passed: boolean;
  /** The commit whose tree was evaluated. */
  commit: string;
  signals: SignalResult[];
  /** Fuzzy-path warnings (spec §4.5). */
  warnings: string[];
  /** Evidence producers, in declaration order. */
  producers: ProducerRun[];
}

/** The checks of `gates` in evaluation order. */
export function gateChecks(gates: GateSpec): CompletionSignal[] {
  return [
    ...(gates.signals ?? []),
    ...(gates.quality_gates ?? []).map((c) => ({
      kind: "quality_gate" as const,
      detail: c.command,
      name: c.name,
      timeout_s: c.timeout_s,
    })),
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
  const producers = gates.evidence ?? [];
  if (checks.length === 0 && producers.length === 0) {
    return { passed: true, commit, signals: [], warnings: [], producers: [] };
  }
  const id = crypto.randomUUID().slice(0, 12);
  const path = join(workspacePaths(root).worktrees, `_gate-${id}`);
  // The tree is agents' work, attributes included: its checkout runs no filter they pick.
  const config = () => hardenedConfig(root, { signal: options.signal }); // right before each call
  const o = { cwd: root, signal: options.signal, config };
  await gitWorktree(root, ["add", "-q", "--detach", "--", path, commit], o);
  const warnings: string[] = [];
  let runner: TreeRunner | undefined;
  try {
    await gates.prepareTree?.(path);
    runner = await gates.runIn?.(path);
    if (runner) {
      options = {
        ...options,
        launcher: runner.launcher,
        commandEnv: runner.env(options.commandEnv),
      };
    }
    const signals = await evaluateSignals(path, checks, {
      ...options,
      warn: (w) => {
        warnings.push(w);
        (options.warn ?? console.warn)(w);
      },
    });
    const runs: ProducerRun[] = [];
    for (const p of producers) runs.push(await runProducer(path, p, options));
    if (runner) signals.forEach(saidWhere);
    return { passed: signals.every((s) => s.passed), commit, signals, warnings, producers: runs };
  } finally {
    await runner?.release();
    const removed = await gitWorktree(root, ["remove", "--force", "--force", path], {
      allowFailure: true,
    });
    if (removed.code !== 0) {
      await Deno.remove(path, { recursive: true }).catch(() => {});
      await gitWorktree(root, ["prune"], { allowFailure: true });
    }
  }
}

/**
 * A command the agent image lacks is not missing on the host: say where the gate ran and the fix
 * (its last line, the one a failure's reason quotes).
 */
function saidWhere(s: SignalResult): void {
  if (s.exit_code !== 127) return;
  s.output_tail += "\nnot found in the agent image: under isolation: container the gates run " +
    "in containers of it; add the command to the image (container.install or your own image)";
}

async function runProducer(
  dir: string,
  producer: CommandCheck,
  options: SignalOptions,
): Promise<ProducerRun> {
  const r = await runShell(producer.command, {
    cwd: dir,
    timeoutMs: producer.timeout_s * 1000,
    signal: options.signal,
    env: options.commandEnv,
    launcher: options.launcher,
    captureBytes: PRODUCER_CAPTURE_BYTES,
  });
  return {
    name: producer.name,
    command: producer.command,
    exit_code: r.code,
    timed_out: r.timed_out,
    output: r.output ?? new Uint8Array(),
    truncated: r.output_truncated ?? false,
    duration_ms: r.duration_ms,
  };
}
