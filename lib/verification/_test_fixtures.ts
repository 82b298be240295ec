/**
 * Test helpers of verification: a task input, producer runs and checks, and sealing a bundle
 * from a made-up gate evaluation exactly as the service does.
 */
import type { SignalResult } from "../janitor/signals.ts";
import type { ProducerRun } from "../merge/gates.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";
import type { SealedBundle } from "./bundle.ts";
import type { Evidence } from "./ledger.ts";
import type { TaskInput } from "../tasks/task.ts";
import { sealEvidence } from "./seal.ts";

/** A producer run that exited `exit_code` after writing `output`. */
export function producerRun(name: string, output: string, exit_code = 0): ProducerRun {
  return {
    name,
    command: `${name} --report`,
    exit_code,
    timed_out: false,
    truncated: false,
    duration_ms: 5,
    output: new TextEncoder().encode(output),
  };
}

/** A task input with defaults for everything but its id (and what `over` sets). */
export function taskInput(id: string, over: Partial<TaskInput> = {}): TaskInput & { id: string } {
  return {
    id,
    title: `Task ${id}`,
    role: "qa",
    priority: 2,
    scope: "small",
    complexity: "low",
    depends_on: [],
    owned_files: [],
    completion_signals: [],
    batch_eligible: false,
    ...over,
  };
}

/** A passed check of `kind` (a quality gate needs its `name`). */
export function passedCheck(
  kind: SignalResult["kind"],
  detail: string,
  name?: string,
): SignalResult {
  return {
    kind,
    detail,
    ...(name !== undefined ? { name, exit_code: 0 } : {}),
    passed: true,
    output_tail: "",
    duration_ms: 3,
  };
}

/** What to seal. */
export interface SampleSeal {
  runId: string;
  taskId: string;
  sessionId?: string;
  producers: ProducerRun[];
  checks?: SignalResult[];
  evidence?: Evidence;
}

/** Seal a bundle into the run's journal (which must exist) and audit chain. */
export function sealSample(paths: WorkspacePaths, s: SampleSeal): Promise<SealedBundle> {
  return sealEvidence({
    paths,
    runId: s.runId,
    journalPath: journalPath(paths, s.runId),
    taskId: s.taskId,
    sessionId: s.sessionId ?? "s1",
    tree: "d".repeat(40),
    evidence: s.evidence ??
      { tests_run: true, quality_gates_run: true, completion_signals_checked: true },
    gates: {
      passed: (s.checks ?? []).every((c) => c.passed),
      commit: "c".repeat(40),
      warnings: [],
      signals: s.checks ?? [],
      producers: s.producers,
    },
  });
}
