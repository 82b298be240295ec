/**
 * Landing finished work: capture the diff, journal the completion, evaluate the task's gates on
 * the tree the merge would produce, merge, and journal the outcome. Conflicts and a user's
 * dirty checkout leave the task DONE and are retried; failed gates send the task back for a new
 * attempt (up to the attempt limit); with `review.require_approval` the merge waits for the
 * board's `merge` decision.
 */
import { existsSync } from "node:fs";
import { git, resolveCommit } from "../git/git.ts";
import { appendEvents } from "../journal/journal_file.ts";
import type { JournalEvent } from "../journal/row.ts";
import { taskVerificationFailedEvent } from "../merge/events.ts";
import * as ev from "../journal/events.ts";
import { mergeAgentBranch, type MergeOutcome } from "../merge/merge.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { captureDiff } from "../worktrees/diff_capture.ts";
import type { CompletionSignal } from "../janitor/signals.ts";
import { reapWorktree } from "../worktrees/reap.ts";
import {
  agentBranch,
  commitPartialWork,
  type Worktree,
  worktreePath,
} from "../worktrees/worktrees.ts";

/** A task's completion signals (`{path_exists: "x"}`) as the janitor's checks (`{kind, detail}`). */
export function janitorSignals(task: Task): CompletionSignal[] {
  return task.completion_signals.map((signal) => {
    const [kind, detail] = Object.entries(signal)[0] as [CompletionSignal["kind"], string];
    return { kind, detail };
  });
}

/** Conflicted merges are tried this many times before the task is FAILED. */
export const MAX_MERGE_ATTEMPTS = 3;

/** Something the loop should hear about (and show). */
export type LandingNotice =
  | { kind: "merged"; taskId: string; message: string }
  | { kind: "retry"; taskId: string; note: string; message: string }
  | { kind: "waiting"; taskId: string; message: string }
  | { kind: "failed"; taskId: string; message: string };

/** Settings of a {@link Lander}. */
export interface LanderOptions {
  root: string;
  runId: string;
  journalPath: string;
  store: TaskStore;
  targetBranch: string;
  qualityGates: string[];
  maxAttempts: number;
  requireApproval?: boolean;
  notify: (notice: LandingNotice) => void;
}

interface Pending {
  worktree: Worktree;
  kind: "conflict" | "waiting" | "review";
  attempts: number;
  reason: string;
  /** Merges that landed when this one was last tried (retry a conflict after others land). */
  mergesAtLastTry: number;
  lastTry: number;
}

/** Lands the work of finished tasks onto the target branch. */
export class Lander {
  readonly #o: LanderOptions;
  readonly #pending = new Map<string, Pending>();
  #merges = 0;
  busy = false;

  constructor(options: LanderOptions) {
    this.#o = options;
  }

  /** Why DONE tasks have not landed yet (for status). */
  pendingReasons(): Map<string, string> {
    return new Map([...this.#pending].map(([id, p]) => [id, `${p.kind}: ${p.reason}`]));
  }

  async #append(event: JournalEvent): Promise<void> {
    await appendEvents(this.#o.journalPath, [event]);
  }

  /** The target branch's current commit (new worktrees are cut from it). */
  async targetTip(): Promise<string> {
    const tip = await resolveCommit(`refs/heads/${this.#o.targetBranch}`, { cwd: this.#o.root });
    if (!tip) throw new Error(`target branch ${this.#o.targetBranch} has no commit`);
    return tip;
  }

  /** The worktree of an earlier session, if it still exists (recovery after a crash). */
  async existingWorktree(sessionId: string): Promise<Worktree | undefined> {
    const path = worktreePath(this.#o.root, sessionId);
    const branch = agentBranch(sessionId);
    if (!existsSync(path)) return undefined;
    const base = await git([
      "merge-base",
      `refs/heads/${this.#o.targetBranch}`,
      `refs/heads/${branch}`,
    ], {
      cwd: this.#o.root,
      allowFailure: true,
    });
    if (base.code !== 0) return undefined;
    return { path, branch, base: base.stdout.trim(), pruned: false };
  }

  /** Commit whatever the agent left; true when its branch holds work beyond its base. */
  async commitLeftovers(worktree: Worktree, task: Task, reason: string): Promise<boolean> {
    try {
      const { tip } = await commitPartialWork(
        worktree.path,
        `service: partial work of ${task.id} (${reason})`,
      );
      return tip !== worktree.base;
    } catch {
      return false;
    }
  }

  /** Remove a worktree once its work is merged or kept on a rescue ref. */
  async reap(worktree: Worktree, task: Task): Promise<void> {
    const sessionId = worktree.branch.replace(/^agent\//, "");
    try {
      await reapWorktree(this.#o.root, sessionId, {
        target: this.#o.targetBranch,
        message: `service: leftovers of ${task.id}`,
      });
    } catch (e) {
      this.#o.notify({
        kind: "waiting",
        taskId: task.id,
        message: `worktree kept: ${(e as Error).message}`,
      });
    }
  }

  /** A DONE task's work: diff, completion row, then merge (or wait for approval). */
  async land(
    task: Task,
    worktree: Worktree,
    options: { summary?: string; recovered?: boolean } = {},
  ): Promise<void> {
    this.busy = true;
    try {
      await captureDiff({
        root: this.#o.root,
        runId: this.#o.runId,
        taskId: task.id,
        worktree: worktree.path,
        base: worktree.base,
        journalPath: this.#o.journalPath,
        message: `service: work of ${task.id}`,
      });
      await this.#append(ev.taskCompleted({
        task_id: task.id,
        summary: options.summary?.slice(0, 2000) || undefined,
        recovered: options.recovered,
      }));
      if (this.#o.requireApproval) {
        this.#pending.set(task.id, {
          worktree,
          kind: "review",
          attempts: 0,
          reason: "waiting for an operator's merge decision on the board",
          mergesAtLastTry: this.#merges,
          lastTry: Date.now(),
        });
        this.#o.notify({
          kind: "waiting",
          taskId: task.id,
          message: "completed; waiting for review on the board",
        });
        return;
      }
      await this.#tryMerge(task, worktree, 0);
    } finally {
      this.busy = false;
    }
  }

  /** The board's `merge` decision for a task waiting on review. */
  async approveMerge(task: Task): Promise<void> {
    const pending = this.#pending.get(task.id);
    if (!pending) return;
    this.#pending.delete(task.id);
    await this.#tryMerge(task, pending.worktree, pending.attempts);
  }

  /** Drop a DONE task's pending landing (changes were requested): its work stays on a rescue ref. */
  async discard(task: Task): Promise<void> {
    const pending = this.#pending.get(task.id);
    this.#pending.delete(task.id);
    if (pending) await this.reap(pending.worktree, task);
  }

  /** Retry conflicted merges once other work landed or no agent runs, and waiting ones every 3 s. */
  async retryPending(runningAgents: number): Promise<void> {
    for (const [taskId, p] of [...this.#pending]) {
      if (p.kind === "review") continue;
      const due = p.kind === "waiting"
        ? Date.now() - p.lastTry >= 3000
        : runningAgents === 0 || this.#merges > p.mergesAtLastTry;
      if (!due) continue;
      this.#pending.delete(taskId);
      await this.#tryMerge(this.#o.store.require(taskId), p.worktree, p.attempts);
    }
  }

  async #tryMerge(task: Task, worktree: Worktree, attempts: number): Promise<void> {
    this.busy = true;
    let outcome: MergeOutcome;
    try {
      outcome = await mergeAgentBranch(this.#o.root, {
        target: this.#o.targetBranch,
        agent: worktree.branch,
        taskId: task.id,
        gates: { signals: janitorSignals(task), quality_gates: this.#o.qualityGates },
        message: `service: merge ${task.id} (${task.title})`,
      });
    } catch (e) {
      outcome = {
        status: "waiting",
        reason: `merge step failed: ${(e as Error).message}`,
        files: [],
        gates: undefined as never,
      };
    } finally {
      this.busy = false;
    }
    switch (outcome.status) {
      case "merged": {
        await appendEvents(this.#o.journalPath, [
          ev.taskMerged({ task_id: task.id, commit: outcome.commit }),
        ]);
        await this.#o.store.markMerged(task.id);
        this.#merges++;
        await this.reap(worktree, task);
        this.#o.notify({
          kind: "merged",
          taskId: task.id,
          message: `merged as ${outcome.commit.slice(0, 10)}`,
        });
        return;
      }
      case "gates_failed": {
        await appendEvents(this.#o.journalPath, [
          taskVerificationFailedEvent(task.id, outcome.gates),
        ]);
        const failed = outcome.gates.signals.filter((s) => !s.passed).map((s) =>
          `${s.kind} ${s.detail}`
        );
        const note = `the gates failed on the merged tree: ${failed.join("; ")}`;
        await this.reap(worktree, task);
        if (task.attempts >= this.#o.maxAttempts) {
          await this.#o.store.markMergeFailed(task.id, `${note} (after ${task.attempts} attempts)`);
          await this.#append(ev.taskFailed({ task_id: task.id, reason: note }));
          this.#o.notify({ kind: "failed", taskId: task.id, message: `FAILED: ${note}` });
          return;
        }
        await this.#o.store.requeue(task.id, { reason: note });
        await this.#append(ev.taskRetried({ task_id: task.id, reason: note }));
        this.#o.notify({ kind: "retry", taskId: task.id, note, message: `${note}; retrying` });
        return;
      }
      case "conflict": {
        const tries = attempts + 1;
        const files = outcome.files.join(", ");
        if (tries >= MAX_MERGE_ATTEMPTS) {
          const reason =
            `merge conflicts in ${files} after ${tries} attempts; declare owned_files and depends_on`;
          await this.#o.store.markMergeFailed(task.id, reason);
          await this.#append(ev.taskFailed({ task_id: task.id, reason, files: outcome.files }));
          await this.reap(worktree, task);
          this.#o.notify({ kind: "failed", taskId: task.id, message: `FAILED: ${reason}` });
          return;
        }
        this.#pending.set(task.id, {
          worktree,
          kind: "conflict",
          attempts: tries,
          reason: `conflicts in ${files}`,
          mergesAtLastTry: this.#merges,
          lastTry: Date.now(),
        });
        await this.#append(ev.mergeConflict({
          task_id: task.id,
          files: outcome.files,
          attempt: tries,
        }));
        this.#o.notify({
          kind: "waiting",
          taskId: task.id,
          message: `merge conflict in ${files}; retried later`,
        });
        return;
      }
      case "waiting": {
        const first = !this.#pending.has(task.id);
        this.#pending.set(task.id, {
          worktree,
          kind: "waiting",
          attempts,
          reason: outcome.reason,
          mergesAtLastTry: this.#merges,
          lastTry: Date.now(),
        });
        if (first) {
          this.#o.notify({
            kind: "waiting",
            taskId: task.id,
            message: `merge waits: ${outcome.reason}`,
          });
        }
      }
    }
  }
}
