/**
 * Landing a task's work through a pull request (DESIGN.md §12). One step ({@link
 * PullRequestLanding.advance}) takes the task as far as it can go now and says where it stopped:
 *
 * 1. the base is fetched, and the host is asked first what became of the task's branch — a pull
 *    request merged or closed while no process watched (a crash between the merge and its journal
 *    row) is recognised, never opened again;
 * 2. a base that moved past the work sends it back to be rebased (unless a merge queue merges it
 *    with the base anyway); the gates run on the tree the merge would produce (once per tree);
 * 3. the branch is pushed with a lease on the tip last pushed (nothing is pushed when the remote
 *    has it already: a restart never pushes the same work twice) and the pull request is opened,
 *    or found open for its branch (never two);
 * 4. what the host says now is decided (decide.ts): merged, closed by a person, a failed required
 *    check, changes requested, a conflict, a wait — or it merges through the API with the head
 *    SHA as the guard, or enters the merge queue (train).
 *
 * Every change is journaled (`task_pr_opened`, `task_pr_updated`, `task_pr_closed`, and
 * `task_pr_status` when what the host says changes); the run's journal is read back at start so a
 * restarted process continues the same pull requests. The host blinking (5xx, a timeout, a rate
 * limit, a refused token) never fails a task: the step says what it waits for and the poller
 * tries again after a back-off.
 */
import { git, resolveCommit } from "../git/git.ts";
import * as ev from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { readLine } from "../journal/event_reader.ts";
import { failedSignals } from "../merge/events.ts";
import type { GateOutcome } from "../merge/merge.ts";
import type { Task } from "../tasks/task.ts";
import { activityHub } from "../events/hub.ts";
import { HOST_EVENT_ACTIVITY } from "../webhooks/handler.ts";
import { pullRequestBody, pullRequestTitle } from "./body.ts";
import { decidePullRequest, requiredChecks } from "./decide.ts";
import type { Check, PullRequest, PullRequestHost, Requirements, Snapshot } from "./host.ts";
import type { LandingOutcome } from "./outcome.ts";
import { PrPoller } from "./poller.ts";
import { wakeOf } from "./wake.ts";
import { fetchBranch, remoteTip } from "../git/remote.ts";
import { deleteBranch as deleteRemoteBranch, pushBranch } from "./push.ts";
import type { LandingSettings } from "./settings.ts";
import { HttpApiError } from "../http/api_error.ts";
import { mergeOnto } from "../merge/merge_tree.ts";

/** GitHub's words when a pull request's head adds nothing to its base. */
const NO_COMMITS = /no commits between/i;

/** Whether the base requires a pull request to hold its tip before it merges. */
function mustRebase(req: Requirements): boolean {
  // A merge queue merges with the base anyway: never rebased for it.
  return req.upToDate && !req.queue;
}

/** What the landing needs of the run's task work (lib/integration/task_work.ts). */
export interface LandingWork {
  /** The agent branch holding `taskId`'s work, when the run holds it. */
  branchOf(taskId: string): string | undefined;
  /** The task's gates on the tree the merge of its branch into the base would produce. */
  gate(task: Task): Promise<GateOutcome>;
  /** The commit its diff was captured and judged at: what is pushed (else the branch's tip). */
  tipOf?(taskId: string): string | undefined;
  /** The protected paths its diff touches (the body names them, DESIGN.md §18). */
  protectedPaths?(taskId: string): string[];
  /** The files over `max_landed_file_mb` its diff adds or grows, and the limit (the body names them). */
  oversizedFiles?(
    taskId: string,
  ): { files: { path: string; bytes: number }[]; limitBytes: number } | undefined;
}

/** Options of {@link PullRequestLanding}. */
export interface PullRequestLandingOptions {
  settings: LandingSettings;
  host: PullRequestHost;
  /** The workspace. */
  root: string;
  runId: string;
  journalPath: string;
  work: LandingWork;
  /** The review board's base URL, linked from each pull request. */
  boardUrl?: string;
  /** Told when something changed for `taskId` on the host (or its retry is due). */
  onChange: (taskId: string) => void;
  warn: (line: string) => void;
  now?: () => number;
}

/** What the journal and this process know of a task's pull request. */
interface PrRecord {
  branch: string;
  number: number;
  url: string;
  /** The head the host has, as far as the service pushed it. */
  head: string;
  enqueued: boolean;
  /** The last `task_pr_status` journaled (its digest). */
  status?: string;
  /** Re-runs asked for, by head and check (`<sha>\0<name>`). */
  reruns: Map<string, Rerun>;
  /** The host refused to merge this head so many times in a row (the next ask waits longer). */
  refused?: { head: string; count: number };
}

/** A re-run of a failed required check the host was asked for. */
interface Rerun {
  count: number;
  /** The failed result that was re-run (`<id>@<completed at>`): seen again, it is not the new one. */
  of: string;
  /** When it was asked for (ms). */
  at: number;
}

/** How long the failed result a re-run replaces may still show before it is taken as final. */
const RERUN_GRACE_MS = 5 * 60_000;

/** The identity of one result of a check (a re-run gives a new id or a new completion time). */
function resultOf(c: Check): string {
  return `${c.rerun?.id ?? ""}@${c.completedAt ?? ""}`;
}

/** The reason of the `task_pr_updated` row of an enqueue (GitHub's queue, GitLab's train). */
const ENQUEUED = /^added to the merge (queue|train)$/;

/** How long the base's requirements are trusted before they are read again. */
const REQUIREMENTS_TTL_MS = 60_000;

/** A digest of everything the run acts on in a snapshot (the poller compares them). */
function snapshotDigest(s: Snapshot): string {
  return JSON.stringify([
    s.pr.state,
    s.pr.headSha,
    s.pr.mergeable,
    s.pr.draft,
    s.pr.mergeCommit ?? "",
    s.checks.map((c) => [c.name, c.state]),
    s.reviews.map((r) => [r.user, r.state, r.commitId ?? ""]),
    s.approvalsLeft ?? -1,
    s.queue ?? null,
  ]);
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/** Lands the run's finished work through pull requests. */
export class PullRequestLanding {
  readonly #o: PullRequestLandingOptions;
  readonly #s: LandingSettings;
  readonly #host: PullRequestHost;
  readonly #records = new Map<string, PrRecord>();
  /** The last closed pull request of each task (a new one says it replaces it). */
  readonly #earlier = new Map<string, string>();
  readonly #failures = new Map<string, number>();
  readonly #poller: PrPoller;
  #requirements: { value: Requirements; at: number } | undefined;
  #unsubscribe: (() => void) | undefined;
  /** Branch deletions after merges, still under way (awaited by {@link stop}). */
  readonly #cleanups = new Set<Promise<void>>();

  constructor(options: PullRequestLandingOptions) {
    this.#o = options;
    this.#s = options.settings;
    this.#host = options.host;
    this.#poller = new PrPoller({
      intervalMs: this.#s.pollIntervalMs,
      maxIntervalMs: this.#s.pollMaxIntervalMs,
      look: async (number, head) =>
        snapshotDigest(await this.#host.snapshot(number, await this.#req(), head || undefined)),
      lookBase: () => this.#host.baseTip(this.#s.base),
      onChange: options.onChange,
      rate: () => ({}),
      warn: options.warn,
      now: options.now,
    });
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  #remote() {
    return { root: this.#o.root, remote: this.#s.remote };
  }

  /** Continue the pull requests the run's journal records, watch for webhooks, start polling. */
  async start(): Promise<void> {
    await this.#readJournal();
    this.#unsubscribe = activityHub.subscribe((a) => {
      if (a.kind !== HOST_EVENT_ACTIVITY) return;
      const wake = wakeOf(a.detail, this.#s);
      if (!wake) return;
      this.#poller.wake(wake.hint);
      if (wake.baseMoved) this.#poller.lookAtBase();
    });
    this.#poller.start();
  }

  /** Stop polling and listening. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    await this.#poller.stop();
    await Promise.all(this.#cleanups);
  }

  /** Pull requests being watched (by task id), for status displays and tests. */
  watching(): string[] {
    return this.#poller.watching();
  }

  async #readJournal(): Promise<void> {
    let text = "";
    try {
      text = await Deno.readTextFile(this.#o.journalPath);
    } catch { /* a new run */ }
    for (const line of text.split("\n")) {
      if (!line.includes('"task_pr_') && !line.includes('"task_merged"')) continue;
      const e = readLine(line); // a torn line, a malformed row: says nothing
      if (!e || !("task_id" in e)) continue;
      const rec = this.#records.get(e.task_id);
      switch (e.type) {
        case "task_pr_opened":
          this.#records.set(e.task_id, {
            branch: e.branch ?? "",
            number: e.number,
            url: e.url ?? "",
            head: e.head_sha ?? "",
            enqueued: false,
            reruns: new Map(),
          });
          break;
        case "task_pr_check_rerun":
          if (rec?.number === e.number && e.check && e.head_sha) {
            // After a restart the re-run's result is whatever shows now: the count is spent.
            rec.reruns.set(`${e.head_sha}\0${e.check}`, { count: e.rerun ?? 1, of: "", at: 0 });
          }
          break;
        case "task_pr_updated":
          if (rec?.number === e.number) {
            rec.head = e.head_sha ?? rec.head;
            if (ENQUEUED.test(e.reason ?? "")) rec.enqueued = true;
          }
          break;
        case "task_pr_closed":
          if (rec?.number === e.number) {
            this.#earlier.set(e.task_id, this.#host.ref(rec.number));
            this.#records.delete(e.task_id);
          }
          break;
        case "task_merged":
          this.#records.delete(e.task_id);
          break;
      }
    }
  }

  async #req(): Promise<Requirements> {
    const cached = this.#requirements;
    if (cached && this.#now() - cached.at < REQUIREMENTS_TTL_MS) return cached.value;
    const value = await this.#host.requirements(this.#s.base);
    this.#requirements = { value, at: this.#now() };
    return value;
  }

  async #journal(...events: ReturnType<typeof ev.taskPrOpened>[]): Promise<void> {
    await appendEvents(this.#o.journalPath, events);
  }

  /**
   * Take `task`'s pull request as far as it can go now. `mayMerge` false (the board's merge
   * decision is pending) still pushes and opens it, so checks and reviewers start, but never
   * merges.
   */
  async advance(task: Task, mayMerge: boolean): Promise<LandingOutcome> {
    const branch = this.#o.work.branchOf(task.id);
    if (!branch) return { kind: "waiting", reason: "the task's worktree is gone" };
    try {
      const outcome = await this.#advance(task, branch, mayMerge);
      this.#failures.delete(task.id);
      return outcome;
    } catch (e) {
      const failures = (this.#failures.get(task.id) ?? 0) + 1;
      this.#failures.set(task.id, failures);
      const delay = this.#poller.retryDelay(e, failures);
      this.#poller.retry(task.id, delay);
      return {
        kind: "pending",
        // At the latest then: a webhook, a look at the host or the base moving may try sooner.
        reason: `${(e as Error).message}; trying again within ${
          Math.max(1, Math.round(delay / 1000))
        } s`,
      };
    }
  }

  async #advance(task: Task, branch: string, mayMerge: boolean): Promise<LandingOutcome> {
    const s = this.#s;
    const host = this.#host;
    let rec = this.#records.get(task.id);
    if (rec && rec.branch && rec.branch !== branch) rec = undefined; // an earlier attempt's
    const known = rec;
    const ask = async () => {
      const req = await this.#req();
      const snap = known && await host.snapshot(known.number, req, known.head || undefined);
      return { req, snap };
    };
    // The base is fetched while the host is asked about the pull request (side by side).
    const [baseTip, asked] = await Promise.all([fetchBranch(this.#remote(), s.base), ask()]);
    this.#poller.seenBase(baseTip, task.id);
    const req = asked.req;
    let snap: Snapshot | undefined = asked.snap;
    if (!rec) {
      const found = await host.findByHead(branch);
      if (found) {
        // Opened (or even merged) by an earlier process that died before journaling it.
        rec = this.#adopt(task.id, found);
        if (found.state === "open") {
          await this.#journal(ev.taskPrOpened({
            task_id: task.id,
            number: found.number,
            url: found.url,
            head_sha: found.headSha,
            branch,
            base: s.base,
          }));
        }
        snap = await host.snapshot(found.number, req);
      }
    }
    if (rec && snap?.pr.state === "merged") return await this.#landed(task.id, rec, snap.pr);
    if (rec && snap?.pr.state === "closed") return await this.#closedByPerson(task.id, rec, snap);

    const local = this.#o.work.tipOf?.(task.id) ??
      await resolveCommit(`refs/heads/${branch}`, { cwd: this.#o.root });
    if (!local) return { kind: "waiting", reason: `${branch} has no commit` };
    const empty = await this.#changesNothing(local, baseTip);
    // Brought up to date only when the base requires it (GitHub's strict status checks,
    // GitLab's fast-forward and semi-linear merges); a conflict is found by the gates' merge.
    if (!empty && mustRebase(req) && !(await this.#contains(local, baseTip))) {
      return {
        kind: "base_moved",
        onto: baseTip,
        reason: `${s.base} moved to ${baseTip.slice(0, 10)} on ${s.remote} and ${
          req.upToDateSource ?? "the base"
        } requires pull requests to be up to date; rebasing onto it`,
      };
    }
    const gated = await this.#o.work.gate(task);
    if (gated.status === "conflict") return { kind: "conflict", files: gated.files };
    if (gated.status === "gates_failed") {
      return { kind: "gates_failed", signals: failedSignals(gated.gates) };
    }
    // No change, no pull request (GitHub refuses one: 422 "No commits between").
    if (empty) return await this.#nothingToLand(task.id, rec, snap, baseTip);

    // Push with a lease on what the service pushed last (or found there after a crash).
    const there = snap?.pr.headSha ?? await remoteTip(this.#remote(), branch);
    if (there !== local) {
      const lease = rec?.head || there;
      const pushed = await pushBranch(this.#remote(), branch, local, lease);
      if (!pushed.pushed) {
        return {
          kind: "pending",
          reason: `${branch} moved on ${s.remote} (someone else pushed to it); the service does ` +
            `not overwrite it: ${pushed.detail}`,
        };
      }
      if (rec && snap) {
        const rebased = rec.head && !(await this.#contains(rec.head, baseTip));
        await this.#journal(ev.taskPrUpdated({
          task_id: task.id,
          number: rec.number,
          head_sha: local,
          reason: rebased ? `rebased onto ${s.base} at ${baseTip.slice(0, 10)}` : "new work",
        }));
        rec.head = local;
        snap = await host.snapshot(rec.number, req);
      }
    }
    if (!rec || !snap) {
      const pr = await this.#open(task, branch, gated);
      // The base took the same change meanwhile: GitHub has nothing to open.
      if (!pr) return await this.#nothingToLand(task.id, undefined, undefined, baseTip);
      rec = this.#adopt(task.id, pr);
      rec.head = local;
      await this.#journal(ev.taskPrOpened({
        task_id: task.id,
        number: pr.number,
        url: pr.url,
        head_sha: local,
        branch,
        base: s.base,
      }));
      snap = await host.snapshot(pr.number, req);
    }
    rec.head = local;
    return await this.#decide(task, rec, snap, req, mayMerge);
  }

  /** Open the task's pull request; undefined when the host says its head adds nothing. */
  async #open(
    task: Task,
    branch: string,
    gated: Exclude<GateOutcome, { status: "conflict" }>,
  ): Promise<PullRequest | undefined> {
    const s = this.#s;
    try {
      return await this.#host.open({
        branch,
        base: s.base,
        title: pullRequestTitle({ taskId: task.id, title: task.title }),
        body: pullRequestBody({
          taskId: task.id,
          runId: this.#o.runId,
          title: task.title,
          goal: task.goal,
          summary: task.summary,
          passed: gated.gates.signals.filter((x) => x.passed).map((x) => ({
            kind: x.kind,
            detail: x.detail,
            ...(x.name ? { name: x.name } : {}),
          })),
          boardUrl: this.#o.boardUrl,
          supersedes: this.#earlier.get(task.id),
          protectedPaths: this.#o.work.protectedPaths?.(task.id),
          oversized: this.#o.work.oversizedFiles?.(task.id),
        }),
        draft: s.draft,
        labels: s.labels,
        deleteBranch: s.deleteBranch,
        squash: s.method === "squash",
      });
    } catch (e) {
      if (e instanceof HttpApiError && e.status === 422 && NO_COMMITS.test(e.apiMessage)) {
        return undefined;
      }
      throw e;
    }
  }

  /** True when merging `local` into `baseTip` changes nothing (its work is there, or none). */
  async #changesNothing(local: string, baseTip: string): Promise<boolean> {
    const root = this.#o.root;
    if (await this.#contains(baseTip, local)) return true;
    const tree = (await git(["rev-parse", `${baseTip}^{tree}`], { cwd: root })).stdout.trim();
    const merged = await mergeOnto(root, { commit: baseTip, tree }, local);
    return merged.kind === "clean" && merged.tree === tree;
  }

  /**
   * The task's work changes nothing on the base: it lands as it is, with no pull request (one an
   * earlier step opened for the branch is closed, saying so).
   */
  async #nothingToLand(
    taskId: string,
    rec: PrRecord | undefined,
    snap: Snapshot | undefined,
    baseTip: string,
  ): Promise<LandingOutcome> {
    this.#poller.forget(taskId);
    if (rec && snap?.pr.state === "open") {
      await this.abandon(taskId, `its work changes nothing on ${this.#s.base} any more`);
    }
    this.#records.delete(taskId);
    return { kind: "merged", commit: baseTip, empty: true };
  }

  #adopt(taskId: string, pr: PullRequest): PrRecord {
    const rec: PrRecord = {
      branch: pr.headBranch,
      number: pr.number,
      url: pr.url,
      head: pr.headSha,
      enqueued: false,
      reruns: new Map(),
    };
    this.#records.set(taskId, rec);
    return rec;
  }

  async #contains(tip: string, commit: string): Promise<boolean> {
    const r = await git(["merge-base", "--is-ancestor", commit, tip], {
      cwd: this.#o.root,
      allowFailure: true,
    });
    return r.code === 0;
  }

  async #decide(
    task: Task,
    rec: PrRecord,
    snap: Snapshot,
    req: Requirements,
    mayMerge: boolean,
  ): Promise<LandingOutcome> {
    const host = this.#host;
    const ref = host.ref(rec.number);
    let verdict = decidePullRequest(snap, req, {
      pushed: rec.head,
      enqueued: rec.enqueued,
      mayMerge,
      product: host.product,
    });
    if (verdict.kind === "check_failed") {
      // A flaky test or a dead runner is not the agent's fault: the host runs it again first.
      const rerun = await this.#rerun(task.id, rec, verdict.check);
      if (rerun) verdict = { kind: "wait", waitsFor: rerun };
    }
    await this.#status(
      task.id,
      rec,
      snap,
      req,
      verdict.kind === "wait" ? verdict.waitsFor : undefined,
    );
    this.#poller.watch(task.id, {
      number: rec.number,
      digest: snapshotDigest(snap),
      head: rec.head,
      branch: rec.branch,
    });
    switch (verdict.kind) {
      case "merged":
        return await this.#landed(task.id, rec, snap.pr);
      case "closed":
        return await this.#closedByPerson(task.id, rec, snap);
      case "check_failed":
        return {
          kind: "check_failed",
          check: verdict.check.name,
          summary: verdict.check.summary,
          ...(verdict.check.url ? { url: verdict.check.url } : {}),
          pr: rec.url,
        };
      case "changes_requested":
        return {
          kind: "changes_requested",
          by: verdict.reviews.map((r) => r.user),
          comments: await host.reviewComments(snap.pr, verdict.reviews),
          pr: rec.url,
        };
      case "conflict":
        return {
          kind: "base_moved",
          onto: await fetchBranch(this.#remote(), this.#s.base),
          reason: `${host.product} says ${ref} conflicts with ${this.#s.base}; rebasing onto it`,
        };
      case "wait":
        return { kind: "pending", reason: `${host.noun} ${ref} ${verdict.waitsFor}` };
      case "enqueue":
        return await this.#enqueue(task.id, rec, snap.pr);
      case "merge": {
        const answer = await host.merge(snap.pr, rec.head, this.#s.method);
        if (answer.merged) return await this.#landed(task.id, rec, snap.pr, answer.commit);
        if (answer.queue) {
          // The base needs its merge queue though its rules did not say so (classic protection).
          this.#requirements = { value: { ...req, queue: true }, at: this.#now() };
          return await this.#enqueue(task.id, rec, snap.pr);
        }
        if (answer.behind) {
          // The base requires up-to-date branches though the token could not read that rule.
          this.#requirements = {
            value: { ...req, upToDate: true, upToDateSource: `${host.product}'s answer` },
            at: this.#now(),
          };
          return {
            kind: "base_moved",
            onto: await fetchBranch(this.#remote(), this.#s.base),
            reason:
              `${host.product} will merge ${ref} only once it is up to date with ${this.#s.base}; rebasing onto it`,
          };
        }
        // A refusal is often a moment's (the host still computing): asked again after the poll
        // interval. One that stands (a rule the token cannot read: a review, a signed commit) is
        // asked again less and less often, as a failure is: a change the looks see asks at once.
        const count = rec.refused?.head === rec.head ? rec.refused.count + 1 : 1;
        rec.refused = { head: rec.head, count };
        const delay = count === 1
          ? this.#s.pollIntervalMs
          : this.#poller.retryDelay(undefined, count - 1);
        this.#poller.retry(task.id, delay);
        return {
          kind: "pending",
          reason: `${host.noun} ${ref}: ${host.product} did not merge it (HTTP ${answer.status}: ` +
            `${firstLine(answer.reason)}); asking again within ${Math.round(delay / 1000)} s, ` +
            "or when it changes",
        };
      }
    }
  }

  /**
   * `check` failed on the pushed head: while re-runs are left (`rerun_failed_checks`), ask the
   * host to run it again and say what the pull request waits for; undefined when the failure
   * stands (no re-run left, none possible, or the host refused one).
   */
  async #rerun(taskId: string, rec: PrRecord, check: Check): Promise<string | undefined> {
    const key = `${rec.head}\0${check.name}`;
    const asked = rec.reruns.get(key);
    const max = this.#s.rerunFailedChecks;
    const waiting = `waits for the re-run of required check \`${check.name}\` (${
      asked?.count ?? 0
    } of ${max})`;
    // The result the re-run replaces may show a little longer: it is not the re-run's.
    if (asked && asked.of === resultOf(check) && this.#now() - asked.at < RERUN_GRACE_MS) {
      return waiting;
    }
    const count = asked?.count ?? 0;
    if (count >= max || !check.rerun) return undefined;
    try {
      await this.#host.rerun(check);
    } catch (e) {
      // A token that may not re-run it (or a check the host will not re-run): it stands.
      if (!(e instanceof HttpApiError) || e.status >= 500 || e.status === 429) throw e;
      this.#o.warn(
        `${taskId}: ${this.#host.product} did not re-run \`${check.name}\` (HTTP ${e.status}: ${
          firstLine(e.apiMessage || e.message)
        }); its failure stands`,
      );
      return undefined;
    }
    rec.reruns.set(key, { count: count + 1, of: resultOf(check), at: this.#now() });
    await this.#journal(ev.taskPrCheckRerun({
      task_id: taskId,
      number: rec.number,
      head_sha: rec.head,
      check: check.name,
      rerun: count + 1,
      of: max,
      ...(check.summary ? { summary: firstLine(check.summary) } : {}),
    }));
    this.#poller.retry(taskId, this.#s.pollIntervalMs);
    return `waits for the re-run of required check \`${check.name}\` (${count + 1} of ${max}): ` +
      "it failed, and a new attempt is counted only if it fails again";
  }

  async #enqueue(taskId: string, rec: PrRecord, pr: PullRequest): Promise<LandingOutcome> {
    await this.#host.enqueue(pr, rec.head, this.#s.method);
    rec.enqueued = true;
    await this.#journal(ev.taskPrUpdated({
      task_id: taskId,
      number: rec.number,
      head_sha: rec.head,
      reason: `added to the ${this.#queueNoun()}`,
    }));
    return {
      kind: "pending",
      reason: `${this.#host.noun} ${this.#host.ref(rec.number)} is in the ${this.#queueNoun()}`,
    };
  }

  #queueNoun(): string {
    return this.#s.provider === "gitlab" ? "merge train" : "merge queue";
  }

  /** Journal what the host says when it changed (the page shows it from the run directory). */
  async #status(
    taskId: string,
    rec: PrRecord,
    snap: Snapshot,
    req: Requirements,
    waitsFor: string | undefined,
  ): Promise<void> {
    const required = new Set(req.checks);
    const checks = [...snap.checks];
    for (const c of requiredChecks(snap, req)) {
      if (!checks.some((x) => x.name === c.name)) checks.push(c);
    }
    const data = {
      task_id: taskId,
      number: rec.number,
      state: snap.queue ? "queued" : snap.pr.draft ? "draft" : snap.pr.state,
      head_sha: snap.pr.headSha,
      checks: checks.map((c) => ({
        name: c.name,
        state: c.state,
        required: required.has(c.name),
        ...(c.url ? { url: c.url } : {}),
      })),
      reviews: snap.reviews.map((r) => ({ user: r.user, state: r.state })),
      ...(waitsFor ? { waits_for: waitsFor } : {}),
    };
    const digest = JSON.stringify(data);
    if (rec.status === digest) return;
    rec.status = digest;
    await this.#journal(ev.taskPrStatus(data));
  }

  async #landed(
    taskId: string,
    rec: PrRecord,
    pr: PullRequest,
    commit = pr.mergeCommit ?? pr.headSha,
  ): Promise<LandingOutcome> {
    this.#poller.forget(taskId);
    this.#records.delete(taskId);
    // The host's merge commit is the base's now: fetch it, so dependents start from it; the
    // other pull requests are told at once (each is rebased onto it).
    try {
      this.#poller.seenBase(await fetchBranch(this.#remote(), this.#s.base), taskId);
    } catch (e) {
      this.#o.warn(
        `${taskId}: merged as ${commit.slice(0, 10)}, but fetching ${this.#s.base} failed: ${
          (e as Error).message
        }`,
      );
    }
    if (this.#s.deleteBranch) {
      // Not awaited: the merge is journaled without waiting for the branch's removal.
      const cleanup = this.#host.deleteBranch(rec.branch).catch((e) =>
        this.#o.warn(
          `${taskId}: ${rec.branch} not deleted on ${this.#host.product}: ${(e as Error).message}`,
        )
      ).finally(() => this.#cleanups.delete(cleanup));
      this.#cleanups.add(cleanup);
    }
    return { kind: "merged", commit, pr: rec.url };
  }

  async #closedByPerson(taskId: string, rec: PrRecord, snap: Snapshot): Promise<LandingOutcome> {
    this.#poller.forget(taskId);
    this.#records.delete(taskId);
    this.#earlier.set(taskId, this.#host.ref(rec.number));
    const by = snap.closedBy ?? "someone";
    const said = snap.closeComment ? `: "${firstLine(snap.closeComment)}"` : "";
    const reason = `${this.#host.noun} ${this.#host.ref(rec.number)} was closed by ${by} without ` +
      `merging${said}`;
    await this.#journal(ev.taskPrClosed({
      task_id: taskId,
      number: rec.number,
      reason,
      ...(snap.closedBy ? { by: snap.closedBy } : {}),
    }));
    return { kind: "closed", reason };
  }

  /**
   * The task's landing ended without a merge (a new attempt follows, or it failed or was
   * cancelled): close its open pull request, saying why.
   */
  async abandon(taskId: string, why: string): Promise<void> {
    const rec = this.#records.get(taskId);
    this.#poller.forget(taskId);
    if (!rec) return;
    this.#records.delete(taskId);
    this.#earlier.set(taskId, this.#host.ref(rec.number));
    const pr: PullRequest = {
      number: rec.number,
      url: rec.url,
      state: "open",
      headBranch: rec.branch,
      headSha: rec.head,
      baseBranch: this.#s.base,
      draft: false,
      mergeable: null,
    };
    try {
      await this.#host.close(pr, `Closed by the service: ${why}.`);
      await this.#journal(ev.taskPrClosed({ task_id: taskId, number: rec.number, reason: why }));
      if (this.#s.deleteBranch && rec.head) {
        await deleteRemoteBranch(this.#remote(), rec.branch, rec.head).catch(() => {});
      }
    } catch (e) {
      this.#o.warn(
        `${taskId}: ${this.#host.noun} ${this.#host.ref(rec.number)} left open: ${
          (e as Error).message
        }`,
      );
    }
  }
}
