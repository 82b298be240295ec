/**
 * The I/O of a task's work on its way to the target branch, by task: the agent's worktree, its
 * diff capture, the gated merge, the rebase onto a new tip, and reaping — which keeps the work
 * on a rescue ref and the session's log in the run directory (spec §4.1 rule 2: a copied run
 * directory still shows it), with the log's digest in the journal.
 */
import type { TreeRunner } from "../container/tree_runner.ts";
import { branchCheckLine, restoreDeletedBranch } from "../worktrees/lost_branch.ts";
import { existsSync } from "node:fs";
import { StorageFullError } from "../errors.ts";
import { isDiskFull } from "../util/disk_full.ts";
import { git, resolveCommit, targetRef } from "../git/git.ts";
import { targetTip as targetTipOf } from "../git/known_commits.ts";
import { readRow } from "../journal/event_reader.ts";
import { failedSignals } from "../merge/events.ts";
import {
  gateAgentBranch,
  type GateOutcome,
  mergeAgentBranches,
  type MergeOutcome,
} from "../merge/merge.ts";
import type { PullRequestLanding } from "../landing/mod.ts";
import type { AgentWork, WorkHandle } from "../agent_session/lane.ts";
import { rebaseOnto } from "../merge/rebase.ts";
import { type CompletionSignal, evaluateSignals } from "../janitor/signals.ts";
import type { Task } from "../tasks/task.ts";
import { captureDiff } from "../worktrees/diff_capture.ts";
import type { RawChange } from "../diff/raw_listing.ts";
import { reapWorktree } from "../worktrees/reap.ts";
import { settleWorktree } from "../worktrees/trees.ts";
import { agentBranch, commitPartialWork, worktreePath } from "../worktrees/worktrees.ts";
import type { WorkspacePaths } from "../workspace.ts";
import type { DiffJudgement, MergeResult, RebaseResult } from "./results.ts";
import type { Protection } from "../protect/judge.ts";
import type { OversizedFile } from "../protect/file_sizes.ts";
import type { VerificationStep, VerifyOutcome } from "../verification/completion.ts";
import type { WorktreeEnvironments } from "../worktree_env/environments.ts";
import { printable } from "../util/printable.ts";
import { tooLargeWords } from "../util/size_words.ts";
import { keepSessionLog } from "../runs/session_log.ts";

/** What the decision core is told of a member's landing. */
function mergeResult(outcome: MergeOutcome): MergeResult {
  switch (outcome.status) {
    case "merged":
      return { kind: "merged", commit: outcome.commit };
    case "gates_failed":
      return { kind: "gates_failed", signals: failedSignals(outcome.gates) };
    case "conflict":
      return { kind: "conflict", files: outcome.files };
    case "waiting":
      return { kind: "waiting", reason: outcome.reason, stuck: outcome.stuck };
    case "unchanged":
      return { kind: "unchanged" };
  }
}

/** A task's completion signals (`{path_exists: "x"}`) as the janitor's checks (`{kind, detail}`). */
export function janitorSignals(task: Task): CompletionSignal[] {
  return task.completion_signals.map((signal) => {
    const [kind, detail] = Object.entries(signal)[0] as [CompletionSignal["kind"], string];
    return { kind, detail };
  });
}

/** Settings of {@link TaskWork}. */
export interface TaskWorkOptions {
  paths: WorkspacePaths;
  runId: string;
  journalPath: string;
  targetBranch: string;
  /** Gates, producers and the ledger record of completions (lib/verification). */
  verification: VerificationStep;
  /** Where problems that change nothing are reported. */
  warn: (line: string) => void;
  /**
   * Landing through pull requests (DESIGN.md §12): `targetBranch` is then the base's
   * remote-tracking ref, and work lands by the host's merge, never by advancing a local branch.
   */
  landing?: () => PullRequestLanding | undefined;
  /** The worktree environments: teardown and port release at reap (DESIGN.md §13). */
  environments?: WorktreeEnvironments;
  /** Where a teardown runs (absent: host processes; under isolation: container, a container). */
  teardownRunner?: (tree: string) => Promise<TreeRunner>;
  /** The environment a teardown runs with when the agent's is not known (adopted worktrees). */
  agentEnv?: (taskId: string, sessionId: string) => Promise<Record<string, string>>;
  /** Protected paths and owned files: what each captured diff is judged by (DESIGN.md §18). */
  protection?: Protection;
}

/** The worktrees of a run's tasks and what is done with them. */
export class TaskWork implements AgentWork {
  readonly #o: TaskWorkOptions;
  readonly #handles = new Map<string, WorkHandle>();
  /** Sessions whose log is kept in the run directory. */
  readonly #logsKept = new Set<string>();
  /**
   * By task, the commit its diff was captured and judged at: what is gated, pushed and merged,
   * whatever its branch says later.
   */
  readonly #tips = new Map<string, string>();
  /** By task, the protected paths its diff was last judged to touch. */
  readonly #protected = new Map<string, string[]>();
  /** By task, the files over `max_landed_file_mb` its diff was last judged to add or grow. */
  readonly #oversized = new Map<string, OversizedFile[]>();
  /**
   * By task, the leaves its captured diff changes as git listed them with the patch, and the two
   * commits they are of: the judgement of exactly that diff asks git nothing more.
   */
  readonly #listed = new Map<string, { base: string; tip: string; raw: RawChange[] }>();

  constructor(options: TaskWorkOptions) {
    this.#o = options;
  }

  /** Remember where `taskId`'s work is. */
  set(taskId: string, handle: WorkHandle): void {
    this.#handles.set(taskId, handle);
  }

  /** Where `taskId`'s work is, if the run holds it. */
  get(taskId: string): WorkHandle | undefined {
    return this.#handles.get(taskId);
  }

  /**
   * The target branch's current commit (new worktrees are cut from it): read from its ref file
   * when that names a commit git already named (lib/git/known_commits.ts), else asked of git.
   */
  async targetTip(): Promise<string> {
    const root = this.#o.paths.root;
    const tip = await targetTipOf(root, targetRef(this.#o.targetBranch));
    if (!tip) throw new Error(`target branch ${this.#o.targetBranch} has no commit`);
    return tip;
  }

  /** Find the worktree an earlier process left for `task` (after a stop or a crash). */
  async adopt(task: Task, logPath: string): Promise<WorkHandle | undefined> {
    const sessionId = task.session_id;
    if (!sessionId) return undefined;
    const root = this.#o.paths.root;
    const path = worktreePath(root, sessionId);
    if (!existsSync(path)) return undefined;
    // Its branch deleted by hand while the run was stopped: put back, or said why it cannot be.
    const branch = await restoreDeletedBranch(root, sessionId).catch((e) => {
      this.#o.warn(`${task.id}: its branch not checked: ${(e as Error).message}`);
      return undefined;
    });
    const said = branch && branchCheckLine(task.id, branch);
    if (said) this.#o.warn(said);
    const base = await git([
      "merge-base",
      targetRef(this.#o.targetBranch),
      `refs/heads/${agentBranch(sessionId)}`,
    ], { cwd: root, allowFailure: true });
    if (base.code !== 0) return undefined;
    // Its agent may have ended with no one to settle its git files (a crash): settled now.
    await settleWorktree(root, sessionId).catch((e) =>
      this.#o.warn(`${task.id}: its worktree's git files not checked: ${(e as Error).message}`)
    );
    const handle: WorkHandle = {
      worktree: { path, branch: agentBranch(sessionId), base: base.stdout.trim(), pruned: false },
      sessionId,
      logPath,
      role: task.role,
      landedBefore: await this.#landedBefore(task.id, sessionId, base.stdout.trim()),
    };
    this.#handles.set(task.id, handle);
    return handle;
  }

  /**
   * True when the target already holds the branch (its merge-base is its tip) and the journal
   * captured a diff that changed files: a killed merge completed it. An empty diff stays empty.
   */
  async #landedBefore(taskId: string, sessionId: string, mergeBase: string): Promise<boolean> {
    const tip = await resolveCommit(`refs/heads/${agentBranch(sessionId)}`, {
      cwd: this.#o.paths.root,
    }).catch(() => undefined);
    if (tip !== mergeBase) return false;
    return ((await capturedFiles(this.#o.journalPath, taskId)) ?? 0) > 0;
  }

  /** Commit whatever the agent left; true when its branch holds work beyond its base. */
  async commitLeftovers(taskId: string, reason: string): Promise<boolean> {
    return (await this.keepLeftovers(taskId, reason)).hasWork;
  }

  /**
   * {@link commitLeftovers}, saying also when the commit failed on a full disk (`diskFull`: what
   * git said, `where`: the worktree): its work is then uncommitted in the worktree, not absent.
   */
  async keepLeftovers(
    taskId: string,
    reason: string,
  ): Promise<{ hasWork: boolean; diskFull?: { said: string; where: string } }> {
    const h = this.#handles.get(taskId);
    if (!h) return { hasWork: false };
    try {
      const { tip } = await commitPartialWork(
        h.worktree.path,
        `service: partial work of ${taskId} (${reason})`,
        { root: this.#o.paths.root, base: h.worktree.base },
      );
      return { hasWork: tip !== h.worktree.base };
    } catch (e) {
      if (!isDiskFull(e)) return { hasWork: false };
      return { hasWork: false, diskFull: { said: (e as Error).message, where: h.worktree.path } };
    }
  }

  /**
   * True when `task` has completion signals and every one passes on the work in its worktree
   * (`recovery.land_unreported` lands interrupted work only then); false otherwise.
   */
  async signalsPass(task: Task): Promise<boolean> {
    const taskId = task.id;
    const h = this.#handles.get(taskId);
    if (!h) return false;
    const signals = janitorSignals(task);
    if (signals.length === 0) return false; // nothing says it is finished
    try {
      const results = await evaluateSignals(h.worktree.path, signals, { warn: this.#o.warn });
      return results.every((r) => r.passed);
    } catch (e) {
      this.#o.warn(`${taskId}: completion signals not evaluated: ${(e as Error).message}`);
      return false;
    }
  }

  /**
   * Commit the work and store its diff (`task_diff_captured`); fail-open (spec §4.1 rule 5). Its
   * agent has ended, so its session log is whole: it is kept in the run directory now (at reap
   * when a teardown will add to it).
   */
  async capture(taskId: string): Promise<void> {
    const h = this.#handles.get(taskId);
    if (!h) return;
    const result = await captureDiff({
      root: this.#o.paths.root,
      runId: this.#o.runId,
      taskId,
      worktree: h.worktree.path,
      base: h.worktree.base,
      journalPath: this.#o.journalPath,
      message: `service: work of ${taskId}`,
      warn: this.#o.warn,
    });
    if (!result.captured) this.#o.warn(`${taskId}: no diff captured: ${result.reason}`);
    else if (result.leftOut.length > 0) {
      this.#o.warn(
        `${taskId}: kept out of its commits (ignored or copied files): ${
          printable(result.leftOut.slice(0, 10).join(", "))
        }${result.leftOut.length > 10 ? ` and ${result.leftOut.length - 10} more` : ""}${
          result.rewritten > 0
            ? `; the agent's ${result.rewritten} commit(s) holding them were rewritten into one`
            : ""
        }`,
      );
    }
    const tip = result.captured
      ? result.tip
      : await resolveCommit(`refs/heads/${h.worktree.branch}`, { cwd: this.#o.paths.root });
    if (tip) this.#tips.set(taskId, tip);
    else this.#tips.delete(taskId);
    if (result.captured && result.changes) {
      this.#listed.set(taskId, { base: h.worktree.base, tip: result.tip, raw: result.changes });
    } else this.#listed.delete(taskId);
    if (result.captured && result.truncated) {
      this.#o.warn(`${taskId}: ${tooLargeWords(result.truncated)} (stored: its first whole files)`);
    }
    // A teardown still writes to the log at reap: then the log is kept after it instead.
    if (!this.#hasTeardown(h)) await this.#keepLog(taskId, h);
  }

  /**
   * Judge `task`'s captured diff (DESIGN.md §18): the protected paths it touches and the paths
   * outside its owned_files; undefined when nothing is configured to judge or the run does not
   * hold its work.
   */
  judge(task: Task): Promise<DiffJudgement | undefined> {
    return this.#judge(task.id, task.owned_files);
  }

  async #judge(taskId: string, owned: readonly string[]): Promise<DiffJudgement | undefined> {
    const protection = this.#o.protection;
    const h = this.#handles.get(taskId);
    if (!protection || !h) return undefined;
    const tip = this.#tips.get(taskId);
    if (!tip) {
      return { protected: [], outsideOwned: [], error: "its captured commit is not known" };
    }
    const listed = this.#listed.get(taskId);
    const j = await protection.judge({
      cwd: this.#o.paths.root,
      base: h.worktree.base,
      tip,
      owned,
      // The captured diff's own listing, when it is of these two commits.
      ...(listed?.base === h.worktree.base && listed.tip === tip ? { raw: listed.raw } : {}),
    });
    if ("error" in j) return { protected: [], outsideOwned: [], error: j.error };
    this.#protected.set(taskId, j.protected);
    if (j.oversized.length > 0) this.#oversized.set(taskId, j.oversized);
    else this.#oversized.delete(taskId);
    const limitBytes = protection.maxFileBytes;
    return { ...j, ...(limitBytes === null ? {} : { limitBytes }) };
  }

  /** The commit of `taskId`'s work that lands: the one its diff was captured and judged at. */
  tipOf(taskId: string): string | undefined {
    return this.#tips.get(taskId);
  }

  /** The protected paths `taskId`'s diff was last judged to touch (DESIGN.md §18). */
  protectedPaths(taskId: string): string[] {
    return this.#protected.get(taskId) ?? [];
  }

  /**
   * The files over `max_landed_file_mb` `taskId`'s diff was last judged to add or grow, and the
   * limit (DESIGN.md §18); undefined when none.
   */
  oversizedFiles(taskId: string): { files: OversizedFile[]; limitBytes: number } | undefined {
    const files = this.#oversized.get(taskId);
    const limitBytes = this.#o.protection?.maxFileBytes;
    return files && typeof limitBytes === "number" ? { files, limitBytes } : undefined;
  }

  #hasTeardown(h: WorkHandle): boolean {
    return (this.#o.environments?.spec(h.role).teardown.length ?? 0) > 0;
  }

  /** The verification step of a fresh completion: gates, producers, ledger record, bundle. */
  verify(taskId: string): Promise<VerifyOutcome> {
    const h = this.#handles.get(taskId);
    const handle = h && { sessionId: h.sessionId, branch: h.worktree.branch, logPath: h.logPath };
    return this.#o.verification.verify(taskId, handle);
  }

  /** The agent branch holding `taskId`'s work, when the run holds it. */
  branchOf(taskId: string): string | undefined {
    return this.#handles.get(taskId)?.worktree.branch;
  }

  /**
   * The task's gates on the tree the merge of its branch into the target would produce, changing
   * nothing (a pull request's host merges); a tree already gated is not gated again.
   */
  async gate(task: Task): Promise<GateOutcome> {
    const h = this.#handles.get(task.id);
    if (!h) return { status: "conflict", files: [] };
    const verification = this.#o.verification;
    const outcome = await gateAgentBranch(this.#o.paths.root, {
      target: this.#o.targetBranch,
      agent: this.#tips.get(task.id) ?? h.worktree.branch,
      taskId: task.id,
      gates: verification.gateSpec(task, verification.waitsForMerge(task.id)),
      evaluated: verification.evaluated(task.id),
    });
    if (outcome.status !== "conflict") {
      const tree = outcome.status === "ready" ? outcome.merge.tree : outcome.tree;
      await verification.afterMerge(task.id, outcome.gates, tree);
    }
    return outcome;
  }

  /**
   * Land `tasks`, in their order, as one train: the gates of each on the tree its merge would
   * produce (side by side), then one advance of the target (lib/merge/train.ts). Landing through
   * pull requests, each goes its own way through its pull request instead. `prepared` is called
   * once the train's candidates are gated (a train asked for then is prepared on top of them).
   */
  async merge(tasks: Task[], prepared?: () => void): Promise<MergeResult[]> {
    const pullRequests = this.#o.landing?.();
    if (pullRequests) {
      const results: MergeResult[] = [];
      for (const task of tasks) {
        const r = await pullRequests.advance(task, true);
        results.push(r.kind === "pending" ? { kind: "waiting", reason: r.reason } : r);
      }
      return results;
    }
    const verification = this.#o.verification;
    const results: MergeResult[] = tasks.map(() => ({
      kind: "waiting",
      reason: "the task's worktree is gone",
      stuck: true, // nothing brings it back
    }));
    const landing = tasks.flatMap((task, i) => {
      const h = this.#handles.get(task.id);
      return h
        ? [{
          task,
          i,
          tip: this.#tips.get(task.id),
          branch: h.worktree.branch,
          // Unknown for work the target already holds: the train then takes it as landed.
          base: h.landedBefore ? undefined : h.worktree.base,
        }]
        : [];
    });
    try {
      const outcomes = await mergeAgentBranches(this.#o.paths.root, {
        target: this.#o.targetBranch,
        onPrepared: prepared,
        members: landing.map(({ task, tip, branch, base }) => ({
          // The commit whose diff was captured and judged, whatever the branch holds now.
          agent: tip ?? branch,
          name: branch,
          base,
          taskId: task.id,
          gates: verification.gateSpec(task, verification.waitsForMerge(task.id)),
          evaluated: verification.evaluated(task.id),
          // A title may be a ticket's: `git log` prints it on a terminal, so escaped.
          message: `service: merge ${task.id} (${printable(task.title)})`,
        })),
      });
      for (const [j, outcome] of outcomes.entries()) {
        const { task, i } = landing[j];
        if ("gates" in outcome) {
          await verification.afterMerge(task.id, outcome.gates, outcome.tree);
        }
        results[i] = mergeResult(outcome);
      }
    } catch (e) {
      // A full disk waits for a person to free space; other failures are tried again.
      const stuck = e instanceof StorageFullError;
      for (const { i } of landing) {
        results[i] = {
          kind: "waiting",
          reason: `merge step failed: ${(e as Error).message}`,
          stuck,
        };
      }
    }
    return results;
  }

  /** Rebase the task's branch onto the target's tip; a changed diff is captured again. */
  async rebase(taskId: string): Promise<RebaseResult> {
    const h = this.#handles.get(taskId);
    if (!h) return { kind: "conflict", files: [], otherChange: "the task's worktree is gone" };
    const onto = await this.targetTip();
    const out = await rebaseOnto({
      worktree: h.worktree.path,
      base: h.worktree.base,
      onto,
      root: this.#o.paths.root,
    });
    if (out.kind !== "rebased") return out;
    h.worktree = { ...h.worktree, base: onto };
    if (out.diffChanged) await this.capture(taskId);
    else this.#tips.set(taskId, out.tip);
    // Judged again: what lands now is the rebased branch.
    const judged = await this.#judge(taskId, []);
    return judged && !judged.error
      ? { ...out, protected: judged.protected, oversized: judged.oversized ?? [] }
      : out;
  }

  /**
   * Remove the worktree (its work stays on a rescue ref unless merged) after its environment's
   * teardown, keep the session's log in the run directory, journaling its digest (unless its
   * capture kept it), and release the session's ports.
   */
  async reap(taskId: string, reason = ""): Promise<void> {
    const h = this.#handles.get(taskId);
    const landed = reason === "merged";
    // Its pull request did not land: close it, saying why (a new attempt opens its own).
    if (!landed) await this.#o.landing?.()?.abandon(taskId, reason || "its work did not land");
    if (!h) return;
    // Taken out at once: a new attempt of the task may set its own while this one is reaped.
    this.#handles.delete(taskId);
    this.#tips.delete(taskId);
    this.#protected.delete(taskId);
    this.#oversized.delete(taskId);
    this.#listed.delete(taskId);
    await this.#o.verification.beforeReap(taskId);
    try {
      const r = await reapWorktree(this.#o.paths.root, h.sessionId, {
        target: this.#o.targetBranch,
        message: `service: leftovers of ${taskId}`,
        // A host that squashed or rebased it: the tip is not in the base's history, yet landed.
        landed: landed && this.#o.landing?.() !== undefined,
        beforeRemove: () => this.#teardown(taskId, h),
        warn: this.#o.warn,
      });
      if (!r.removed) this.#o.warn(`${taskId}: worktree kept: ${r.reason}`);
    } catch (e) {
      this.#o.warn(`${taskId}: worktree kept: ${(e as Error).message}`);
    }
    await this.#keepLog(taskId, h); // after the teardown, whose output it holds
    await this.#o.environments?.releasePorts(h.sessionId).catch((e) =>
      this.#o.warn(`${taskId}: ports of ${h.sessionId} not released: ${(e as Error).message}`)
    );
  }

  /** The environment's teardown in the worktree; a failure is reported, never fatal. */
  async #teardown(taskId: string, h: WorkHandle): Promise<void> {
    const environments = this.#o.environments;
    if (!environments || environments.spec(h.role).teardown.length === 0) return;
    let runner: TreeRunner | undefined;
    try {
      const env = h.env ?? await this.#o.agentEnv?.(taskId, h.sessionId) ?? {};
      runner = await this.#o.teardownRunner?.(h.worktree.path);
      const out = await environments.teardown({
        tree: h.worktree.path,
        role: h.role,
        env: runner ? runner.env(env) : env,
        logPath: h.logPath,
        ...(runner ? { launcher: runner.launcher } : {}),
      });
      if (out?.failure) {
        this.#o.warn(
          `${taskId}: worktree teardown failed: ${out.failure.command}: ${out.failure.line} ` +
            `(the worktree is removed anyway; the session log has its output)`,
        );
      }
    } catch (e) {
      this.#o.warn(`${taskId}: worktree teardown failed: ${(e as Error).message}`);
    } finally {
      await runner?.release();
    }
  }

  /**
   * Commit what the agent left and keep the worktree for the next run. Its session has ended, so
   * its ports go back (the next attempt leases its own): a clean stop leaves no lease behind.
   */
  async keep(taskId: string, reason: string): Promise<void> {
    await this.commitLeftovers(taskId, reason);
    const h = this.#handles.get(taskId);
    if (!h) return;
    await this.#o.environments?.releasePorts(h.sessionId).catch((e) =>
      this.#o.warn(`${taskId}: ports of ${h.sessionId} not released: ${(e as Error).message}`)
    );
  }

  /** Keep `h`'s session log in the run directory with its digest in the journal, once. */
  async #keepLog(taskId: string, h: WorkHandle): Promise<void> {
    if (this.#logsKept.has(h.sessionId)) return;
    this.#logsKept.add(h.sessionId);
    try {
      await keepSessionLog(this.#o.paths, {
        runId: this.#o.runId,
        taskId,
        sessionId: h.sessionId,
        logPath: h.logPath,
      });
    } catch (e) {
      this.#o.warn(`${taskId}: could not keep the session log: ${(e as Error).message}`);
    }
  }
}

/** How many files `taskId`'s latest captured diff in the journal changed (undefined: none). */
async function capturedFiles(journal: string, taskId: string): Promise<number | undefined> {
  const text = await Deno.readTextFile(journal).catch(() => "");
  let files: number | undefined;
  for (const line of text.split("\n")) {
    if (!line.includes('"task_diff_captured"')) continue;
    try {
      const read = readRow(JSON.parse(line));
      if (read && "type" in read && read.type === "task_diff_captured" && read.task_id === taskId) {
        files = read.files;
      }
    } catch { /* a torn line */ }
  }
  return files;
}
