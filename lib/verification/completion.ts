/**
 * The verification step of a completion (spec §2.9, §4.3; DESIGN.md §10): once the agent has
 * ended, its work is merged in the object store, the task's completion signals and quality
 * gates run on that candidate tree, then its evidence producers; the ledger record is written
 * from what the service observed (the session log, the gates, the janitor) and the task gets
 * `verification_count` and `flagged_unverified` at the same moment; a task that declared
 * producers gets its sealed evidence bundle.
 *
 * When the merge follows at once (no review), its own gate evaluation is the one that records,
 * so no gate runs twice; under review the gates run as soon as the work is captured, so the
 * reviewer sees the evidence, and the merge reuses that result when it produces the same tree.
 * One record per completion: when the candidate conflicts the gates cannot run yet, so the record
 * waits for the merge step's gates (after a rebase); a completion that never reaches any gate
 * (its work was sent back) is recorded when its worktree is reaped, with what was observed.
 */
import type { CommandCheck } from "../config/schema.ts";
import type { CompletionSignal } from "../janitor/signals.ts";
import { taskEvidenceUnsealed, taskVerificationRecorded } from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import type { TreeRunner } from "../container/tree_runner.ts";
import { evaluateGates, gateChecks, type GateResult, type GateSpec } from "../merge/gates.ts";
import { prepareCandidate } from "../merge/merge.ts";
import { loadRoleTemplate, renderPrompt } from "../roles/templates.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { runLogPath, type WorkspacePaths } from "../workspace.ts";
import { observedEvidence } from "./evidence.ts";
import type { Evidence } from "./ledger.ts";
import { type NudgeSettings, readVerificationNudge } from "./nudge.ts";
import type { VerificationNudge } from "./nudge_types.ts";
import { claimIsolation, sealEvidence } from "./seal.ts";
import { logParserFor } from "../agents/adapters/mod.ts";
import { detectTestRuns, type TestRunReport } from "./test_run_detector.ts";
import { RecordedCompletions } from "./recorded_once.ts";
import { AlertLatch } from "./alert_latch.ts";
import { ledgerVerdict } from "./verdict.ts";
import { readFileEnd } from "../util/file_end.ts";

/** Bytes at the end of a session log that are scanned for test runs. */
const LOG_SCAN_BYTES = 64 << 20;

/** Where a completion's work and log are. */
export interface CompletionHandle {
  sessionId: string;
  /** The agent branch, e.g. `agent/<session>`. */
  branch: string;
  logPath: string;
}

/** Settings of {@link VerificationStep}. */
export interface VerificationStepOptions {
  paths: WorkspacePaths;
  runId: string;
  journalPath: string;
  targetBranch: string;
  store: TaskStore;
  /** The quality gates of a task (top-level plus its role's). */
  qualityGates: (task: Task) => CommandCheck[];
  /** The task's completion signals as janitor checks. */
  signals: (task: Task) => CompletionSignal[];
  /**
   * Evaluate the gates and producers as soon as the work is captured (so a reviewer sees the
   * evidence before deciding) rather than with the merge that follows at once. Under
   * `review.require_approval`; otherwise the merge's own evaluation is the one that records, so
   * no gate runs twice.
   */
  evaluateBeforeMerge: boolean;
  /** Thresholds of the alert. */
  nudge: NudgeSettings;
  /** Called once, the moment the alert first trips during this process. */
  onAlert?: (nudge: VerificationNudge) => void;
  warn: (line: string) => void;
  /**
   * The adapter (its name) whose agents wrote the session logs: it reads them; a function names
   * it by session (a run whose tasks fall back to other adapters).
   */
  adapter?: string | ((sessionId: string) => string | undefined);
  /** Gives the tree the gates run on the task's worktree environment (DESIGN.md §13). */
  prepareGateTree?: (task: Task, dir: string) => Promise<void>;
  /** Where the gates' commands run on that tree (absent: host processes; DESIGN.md §14). */
  gateRunner?: (dir: string) => Promise<TreeRunner>;
}

/** What the verification found, for the decision core. */
export interface VerifyOutcome {
  /** The gates ran on the candidate and failed: the merge will refuse it. */
  gatesFailed: boolean;
}

/** The verification step of a run's completions. */
export class VerificationStep {
  readonly #o: VerificationStepOptions;
  /** Gate results by task, with the tree they ran on (reused by the merge). */
  readonly #evaluated = new Map<string, { tree: string; gates: GateResult }>();
  /** Completions whose record waits for the merge step's gates. */
  readonly #waiting = new Map<string, CompletionHandle>();
  /** One record per completion, though completions are verified at once (the verify stage). */
  readonly #recorded: RecordedCompletions;
  /** The alert trips once, however many records end at the same moment. */
  readonly #alert: AlertLatch;

  constructor(options: VerificationStepOptions) {
    this.#o = options;
    this.#recorded = new RecordedCompletions(options.journalPath);
    this.#alert = new AlertLatch({
      read: () => readVerificationNudge(options.paths, options.nudge),
      onTrip: options.onAlert,
      warn: options.warn,
    });
  }

  /** The checks of a task: its signals and quality gates, plus producers when asked. */
  gateSpec(task: Task, withProducers: boolean): GateSpec {
    return {
      signals: this.#o.signals(task),
      quality_gates: this.#o.qualityGates(task),
      evidence: withProducers ? task.evidence : [],
      ...(this.#o.prepareGateTree
        ? { prepareTree: (dir: string) => this.#o.prepareGateTree!(task, dir) }
        : {}),
      ...(this.#o.gateRunner ? { runIn: this.#o.gateRunner } : {}),
    };
  }

  /** The gates already evaluated for `taskId`'s completion, for the merge to reuse. */
  evaluated(taskId: string): { tree: string; gates: GateResult } | undefined {
    return this.#evaluated.get(taskId);
  }

  /** Verify a fresh completion of `taskId` (its diff is captured; its agent has ended). */
  async verify(taskId: string, handle: CompletionHandle | undefined): Promise<VerifyOutcome> {
    this.#evaluated.delete(taskId);
    this.#waiting.delete(taskId);
    const task = this.#o.store.get(taskId);
    if (!task) return { gatesFailed: false };
    try {
      return await this.#verify(task, handle);
    } catch (e) {
      // Fail open like the diff capture: the landing goes on, and the merge step evaluates the
      // gates and writes the record then (or the reap, with what was seen).
      this.#o.warn(`${taskId}: verification deferred to the merge: ${(e as Error).message}`);
      if (handle) this.#waiting.set(taskId, handle);
      return { gatesFailed: false };
    }
  }

  async #verify(task: Task, handle: CompletionHandle | undefined): Promise<VerifyOutcome> {
    if (!handle) {
      // The worktree is gone: nothing can be evaluated; record what the log shows.
      await this.#record(task, task.session_id ?? "unknown", undefined, undefined);
      return { gatesFailed: false };
    }
    const spec = this.gateSpec(task, true);
    if (gateChecks(spec).length === 0 && (spec.evidence ?? []).length === 0) {
      // Nothing to run on the merged tree: the record needs only the log.
      await this.#record(task, handle.sessionId, handle.logPath, undefined);
      return { gatesFailed: false };
    }
    if (!this.#o.evaluateBeforeMerge) {
      // The merge comes next and evaluates them on the tree it lands; it records then.
      this.#waiting.set(task.id, handle);
      return { gatesFailed: false };
    }
    const candidate = await prepareCandidate(this.#o.paths.root, {
      target: this.#o.targetBranch,
      agent: handle.branch,
      taskId: task.id,
    });
    if (candidate.kind === "conflict") {
      this.#waiting.set(task.id, handle);
      return { gatesFailed: false };
    }
    const gates = await evaluateGates(this.#o.paths.root, candidate.commit, spec, {
      warn: this.#o.warn,
    });
    this.#evaluated.set(task.id, { tree: candidate.merge.tree, gates });
    await this.#record(task, handle.sessionId, handle.logPath, {
      gates,
      tree: candidate.merge.tree,
    });
    return { gatesFailed: !gates.passed };
  }

  /** True when `taskId`'s record waits for the merge's gates (they must run its producers too). */
  waitsForMerge(taskId: string): boolean {
    return this.#waiting.has(taskId);
  }

  /**
   * The merge step evaluated the gates on `tree`: keep the result for a retried merge of the same
   * tree, and record a completion that waited for them.
   */
  async afterMerge(taskId: string, gates: GateResult, tree: string): Promise<void> {
    this.#evaluated.set(taskId, { tree, gates });
    await this.#recordWaiting(taskId, { gates, tree });
  }

  /** The completion's worktree is reaped: a record still waiting is written with what was seen. */
  async beforeReap(taskId: string): Promise<void> {
    this.#evaluated.delete(taskId);
    await this.#recordWaiting(taskId, undefined);
  }

  /** Write the record of `taskId` that waited for the merge's gates, once, with `seen`. */
  async #recordWaiting(
    taskId: string,
    seen: { gates: GateResult; tree: string } | undefined,
  ): Promise<void> {
    const handle = this.#waiting.get(taskId);
    const task = this.#o.store.get(taskId);
    if (!handle || !task) return;
    this.#waiting.delete(taskId);
    await this.#safely(taskId, () => this.#record(task, handle.sessionId, handle.logPath, seen));
  }

  /** A record that fails is reported, never allowed to undo what the merge or reap did. */
  async #safely(taskId: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (e) {
      this.#o.warn(`${taskId}: verification record not written: ${(e as Error).message}`);
    }
  }

  async #record(
    task: Task,
    sessionId: string,
    logPath: string | undefined,
    evaluated: { gates: GateResult; tree: string } | undefined,
  ): Promise<void> {
    // A process that resumes the run (after a stop or a crash) lands work an earlier one may
    // have verified already: one record per completion, whoever wrote it.
    if (!await this.#recorded.claim(task.id, sessionId)) return;
    await this.#alert.baseline();
    let observed: Observed;
    try {
      observed = await this.#observe(task, sessionId, logPath, evaluated);
      await this.#o.store.recordVerdict(
        task.id,
        ledgerVerdict(this.#o.paths, sessionId, observed.evidence),
      );
    } catch (e) {
      await this.#recorded.release(task.id, sessionId); // not in the ledger: a later try may write it
      throw e;
    }
    await this.#written(task, sessionId, observed, evaluated);
  }

  /** What the service observed of a completion: the log's test runs, the gates' checks. */
  async #observe(
    task: Task,
    sessionId: string,
    logPath: string | undefined,
    evaluated: { gates: GateResult; tree: string } | undefined,
  ): Promise<Observed> {
    const log = await readLogTail(
      logPath ?? runLogPath(this.#o.paths, this.#o.runId, sessionId),
      runLogPath(this.#o.paths, this.#o.runId, sessionId),
    );
    const adapter = this.#o.adapter;
    const events = logParserFor(typeof adapter === "function" ? adapter(sessionId) : adapter)(log);
    const testRuns = detectTestRuns(events, { prompt: await this.#promptOf(task) });
    return { testRuns, evidence: observedEvidence({ testRuns, checks: evaluated?.gates.signals }) };
  }

  /** The ledger holds the record: the journal row, the sealed bundle and the alert follow. */
  async #written(
    task: Task,
    sessionId: string,
    { evidence, testRuns }: Observed,
    evaluated: { gates: GateResult; tree: string } | undefined,
  ): Promise<void> {
    const verified = evidence.tests_run || evidence.quality_gates_run ||
      evidence.completion_signals_checked;
    await appendEvents(this.#o.journalPath, [taskVerificationRecorded({
      task_id: task.id,
      session_id: sessionId,
      ...evidence,
      verified,
      test_runs: testRuns.sightings.slice(0, 5).map((s) => ({
        runner: s.runner,
        outcome: s.outcome,
        line: s.line.slice(0, 200),
      })),
      reported: task.reported_evidence ?? undefined,
    })]);
    if (evaluated && task.evidence.length > 0) {
      try {
        await sealEvidence({
          paths: this.#o.paths,
          runId: this.#o.runId,
          journalPath: this.#o.journalPath,
          taskId: task.id,
          sessionId,
          gates: evaluated.gates,
          tree: evaluated.tree,
          evidence,
          isolation: await claimIsolation(this.#o.journalPath, sessionId),
        });
      } catch (e) {
        const reason = (e as Error).message;
        this.#o.warn(`${task.id}: evidence bundle not sealed: ${reason}`);
        await appendEvents(this.#o.journalPath, [
          taskEvidenceUnsealed({ task_id: task.id, reason: reason.slice(0, 500) }),
        ]).catch(() => {});
      }
    }
    await this.#alert.check();
  }

  async #promptOf(task: Task): Promise<string> {
    const plain = `${task.title}\n${task.goal}`;
    try {
      return `${
        renderPrompt(await loadRoleTemplate(this.#o.paths.root, task.role), task)
      }\n${plain}`;
    } catch {
      return plain;
    }
  }
}

/** What a record says the service observed. */
interface Observed {
  testRuns: TestRunReport;
  evidence: Evidence;
}

/** The last {@link LOG_SCAN_BYTES} of the first readable log (empty when none is). */
async function readLogTail(...paths: string[]): Promise<string> {
  for (const path of paths) {
    try {
      return (await readFileEnd(path, LOG_SCAN_BYTES)).text;
    } catch {
      continue;
    }
  }
  return "";
}
