/**
 * Landing finished work: after its diff is captured the task is completed (and waits for an
 * operator's merge under `review.require_approval`), merged through its gates, rebased onto the
 * new tip when the merge conflicts, and sent back to an agent — with the conflicting files and
 * the change it collided with in the prompt — when even the rebase conflicts.
 */
import * as ev from "../../journal/events.ts";
import type { CoreEvent } from "./protocol.ts";
import { attemptFailed, type Out, recordCancel } from "./outcomes.ts";
import type { Draft, Landing } from "./state.ts";
import { judgeCaptured, protectedWait, refuseOutsideOwned } from "./judged.ts";
import { gateSaid } from "../../verification/gate_words.ts";

const REVIEW_WAIT = "waiting for an operator's merge decision on the board";

/** What a merge says when a cancel came while it was landing (the store closes it all the same). */
const CANCELLED_TOO_LATE = "; the cancel came while its merge was landing: it stays landed";

/** Why a completion with no changes lands nothing (the log, and its pull request's closing). */
const UNCHANGED = "its work changes nothing on the target branch";

/** What a merge of work its agent never reported says of it (the board says the same). */
const UNREPORTED_NOTE: Record<string, string> = {
  "": "",
  exited: " (it exited without a report)",
  interrupted: " (landed without a report)",
};

/** How a merge that waits is described (in `status`, the journal and the log). */
export function mergeWaitText(reason: string): string {
  // A pull request's wait names what waits ("pull request #3 waits for 1 approving review").
  return /^(pull|merge) request [#!]\d+ /.test(reason) ? reason : `merge waits: ${reason}`;
}

function landing(d: Draft, taskId: string): Landing | undefined {
  return d.landings.get(taskId);
}

function setStage(
  d: Draft,
  l: Landing,
  stage: Landing["stage"],
  reason: string,
  stuck = false,
): void {
  const { stuck: _was, ...rest } = l;
  d.landings.set(l.taskId, {
    ...rest,
    stage,
    reason,
    lastTry: d.now,
    changed: false,
    ...(stuck ? { stuck } : {}),
  });
}

/** `captured`: the task is complete; review or merge follows. */
export function onCaptured(d: Draft, out: Out, e: Extract<CoreEvent, { type: "captured" }>): void {
  const l = landing(d, e.taskId);
  const task = d.tasks.get(e.taskId);
  if (!l || !task) return;
  // What its diff touches is recorded before the completion (DESIGN.md §18).
  const judged = judgeCaptured(d, out, task, e.judged);
  out.journal(ev.taskCompleted({
    task_id: task.id,
    summary: l.unreported ? undefined : task.summary?.slice(0, 2000) || undefined,
    recovered: l.unreported === "exited",
    interrupted: l.unreported === "interrupted",
  }));
  // The agent completed; the service refuses its diff: the card goes on to gated.
  if (judged.kind === "refused") return refuseOutsideOwned(d, out, task, judged.paths);
  // Failed gates need no review: the merge refuses them at once (with their receipt).
  if (judged.kind === "guarded" && !e.gatesFailed) {
    d.landings.set(l.taskId, {
      ...l,
      protectedPaths: judged.paths,
      ...(judged.oversized.length > 0 ? { oversized: judged.oversized } : {}),
    });
    setStage(d, d.landings.get(l.taskId)!, "review", judged.reason);
    out.log(task.id, `completed; ${judged.reason}`);
    return;
  }
  if (d.settings.requireApproval && !e.gatesFailed) {
    setStage(d, l, "review", REVIEW_WAIT);
    out.log(task.id, "completed; waiting for review on the board");
    return;
  }
  setStage(d, l, "merging", "merging");
  out.push({ kind: "merge", taskId: task.id });
}

/** `merge_result`. */
export function onMergeResult(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "merge_result" }>,
): void {
  const l = landing(d, e.taskId);
  const task = d.tasks.get(e.taskId);
  if (!l || !task) return;
  const r = e.result;
  if (l.cancelled && r.kind !== "merged") {
    // Cancelled while the merge step ran, and nothing landed: the cancel stands.
    d.landings.delete(task.id);
    out.push({ kind: "reap", taskId: task.id, reason: "cancelled" });
    return recordCancel(out, task);
  }
  switch (r.kind) {
    case "merged":
      d.landings.delete(task.id);
      d.landed.add(task.id);
      d.notes.delete(task.id);
      out.journal(ev.taskMerged({
        task_id: task.id,
        commit: r.commit,
        pr: r.pr,
        ...(r.empty ? { empty: true } : {}),
      }));
      out.push({ kind: "store", change: { op: "merged", taskId: task.id } });
      out.push({ kind: "reap", taskId: task.id, reason: "merged" });
      out.log(
        task.id,
        (r.empty
          ? `nothing to land: its work changes nothing on the base (at ${
            r.commit.slice(0, 10)
          }); no pull request opened`
          : `merged as ${r.commit.slice(0, 10)}${r.pr ? ` through ${r.pr}` : ""}`) +
          UNREPORTED_NOTE[l.unreported ?? ""] + (l.cancelled ? CANCELLED_TOO_LATE : ""),
      );
      return;
    case "unchanged":
      // Nothing to land: no merge commit is named as this task's, and nothing says merged.
      d.landings.delete(task.id);
      d.notes.delete(task.id);
      out.journal(ev.taskUnchanged({ task_id: task.id }));
      out.push({ kind: "store", change: { op: "unchanged", taskId: task.id } });
      out.push({ kind: "reap", taskId: task.id, reason: UNCHANGED });
      out.log(task.id, `no changes: ${UNCHANGED}; nothing merged, the task is closed`);
      return;
    case "base_moved":
      // Each time is a real move of the remote base while the pull request waits (not a retry
      // loop): it is rebased every time; a rebase that conflicts sends it to a new attempt.
      setStage(d, l, "rebasing", r.reason);
      out.push({ kind: "rebase", taskId: task.id });
      out.log(task.id, r.reason);
      return;
    case "check_failed": {
      d.landings.delete(task.id);
      const reason = `required check \`${r.check}\` failed on ${r.pr}`;
      out.push({ kind: "reap", taskId: task.id, reason });
      attemptFailed(d, out, task, {
        signals: [{ kind: "required_check", detail: r.check, output_tail: r.summary.slice(-800) }],
        reason: `${reason}${r.summary ? `: ${firstLine(r.summary)}` : ""}`,
        note: `the required check \`${r.check}\` failed on your pull request ${r.pr}` +
          `${r.url ? ` (${r.url})` : ""}. It said:\n${r.summary.slice(-2000)}\n` +
          "Fix what makes it fail, and keep the rest of the work.",
        retryable: d.settings.onCiFailure !== "fail",
      });
      return;
    }
    case "changes_requested":
      return changesRequested(
        d,
        out,
        task.id,
        `${r.by.join(", ")} requested changes on ${r.pr}`,
        r.comments.slice(0, 4000),
      );
    case "closed":
      // The store's cancel comes back as a task change: the card's receipt, the reap and the
      // terminal's "cancelled: <reason>" line follow (said once). No merge is under way now.
      setStage(d, l, "closing", r.reason);
      out.push({ kind: "store", change: { op: "cancel", taskId: task.id, reason: r.reason } });
      return;
    case "gates_failed": {
      d.landings.delete(task.id);
      out.push({ kind: "reap", taskId: task.id, reason: "the gates failed" });
      // Each gate as the card says it: its name, exit code and what it said went wrong.
      const failed = r.signals.map((s) => gateSaid(s)).join("; ");
      const tails = r.signals.filter((s) => s.output_tail).map((s) =>
        `\n--- ${s.kind} ${s.detail} ---\n${String(s.output_tail).slice(-800)}`
      ).join("");
      attemptFailed(d, out, task, {
        signals: r.signals,
        reason: `the gates failed on the merged tree: ${failed}`,
        note: `the gates failed on the merged tree: ${failed}${tails}`,
        retryable: true,
      });
      return;
    }
    case "conflict":
      if (l.rebases < d.settings.maxRebases) {
        setStage(d, l, "rebasing", `merge conflict in ${r.files.join(", ")}; rebasing`);
        out.push({ kind: "rebase", taskId: task.id });
        out.log(task.id, `merge conflict in ${r.files.join(", ")}; rebasing onto the new tip`);
        return;
      }
      return conflictNeedsNewAttempt(d, out, task.id, r.files, "");
    case "waiting": {
      // Journaled (once per reason) with the other waits, at the next tick.
      const text = mergeWaitText(r.reason);
      if (d.journaledWaits.get(task.id) !== text) out.log(task.id, text);
      if (l.changed) {
        // The host changed after the step read it: what the step waited for may be there now.
        setStage(d, l, "merging", r.reason);
        out.push({ kind: "merge", taskId: task.id });
        return;
      }
      setStage(d, l, "waiting", r.reason, r.stuck === true);
    }
  }
}

/** `landing_changed`: the host says something changed; a waiting landing is tried now. */
export function onLandingChanged(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "landing_changed" }>,
): void {
  const l = landing(d, e.taskId);
  if (!l) return;
  if (l.stage === "merging") {
    // The step under way may have read the host before the change: it runs again if it waits.
    d.landings.set(l.taskId, { ...l, changed: true });
    return;
  }
  if (l.stage !== "waiting") return; // a rebase or a review: the next step reads the host anew
  setStage(d, l, "merging", l.reason);
  out.push({ kind: "merge", taskId: e.taskId });
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}

/** `rebase_result`. */
export function onRebaseResult(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "rebase_result" }>,
): void {
  const l = landing(d, e.taskId);
  const task = d.tasks.get(e.taskId);
  if (!l || !task) return;
  const r = e.result;
  if (r.kind === "conflict") {
    return conflictNeedsNewAttempt(d, out, task.id, r.files, r.otherChange);
  }
  const rebased = { ...l, rebases: l.rebases + 1 };
  d.landings.set(task.id, rebased);
  out.journal(ev.taskRebased({
    task_id: task.id,
    onto: r.onto,
    head: r.tip,
    diff_changed: r.diffChanged,
  }));
  // Protected paths the approved diff did not touch need a review of their own, as a changed
  // diff does (the rebased branch is judged again).
  const before = rebased.protectedPaths ?? [];
  const guarded = r.protected ?? before;
  const oversized = r.oversized ?? rebased.oversized ?? [];
  const newlyGuarded = guarded.some((p) => !before.includes(p)) ||
    oversized.some((f) => !rebased.oversized?.some((o) => o.path === f.path));
  const held = guarded.length > 0 || oversized.length > 0;
  if ((d.settings.requireApproval && r.diffChanged) || (held && (r.diffChanged || newlyGuarded))) {
    // The operator approved another diff: the rebased one needs its own review.
    if (guarded.length > 0) {
      out.journal(ev.taskProtectedPaths({ task_id: task.id, paths: guarded }));
    }
    if (held) d.landings.set(task.id, { ...rebased, protectedPaths: guarded, oversized });
    const why = r.diffChanged ? "the diff changed" : "it now changes protected paths";
    out.journal(ev.taskCompleted({
      task_id: task.id,
      summary: `rebased onto ${r.onto.slice(0, 10)}: ${why}, review it again`,
    }));
    setStage(
      d,
      d.landings.get(task.id)!,
      "review",
      held ? protectedWait({ protected: guarded, oversized }) : REVIEW_WAIT,
    );
    out.log(task.id, `rebased onto the new tip; ${why}, so it waits for review again`);
    return;
  }
  setStage(d, rebased, "merging", "merging after a rebase");
  out.log(task.id, `rebased onto ${r.onto.slice(0, 10)}; merging`);
  out.push({ kind: "merge", taskId: task.id });
}

function conflictNeedsNewAttempt(
  d: Draft,
  out: Out,
  taskId: string,
  files: string[],
  otherChange: string,
): void {
  const task = d.tasks.get(taskId)!;
  d.landings.delete(taskId);
  out.journal(ev.mergeConflict({ task_id: taskId, files, attempt: d.attemptOf.get(taskId) }));
  out.push({ kind: "reap", taskId, reason: "merge conflict" });
  const named = files.join(", ");
  attemptFailed(d, out, task, {
    signals: files.map((f) => ({ kind: "merge_conflict", detail: f })),
    reason: `merge conflict in ${named} with work merged meanwhile, even after a rebase`,
    note: `your previous work conflicted in ${named} with changes merged into the branch ` +
      `meanwhile. Start from the current files, keep those changes, and redo your task on top of ` +
      `them.${otherChange ? `\nThe other change:\n${otherChange}` : ""}`,
    retryable: true,
    files,
  });
}

/** `review`: an operator's decision from the board. */
export function onReview(d: Draft, out: Out, e: Extract<CoreEvent, { type: "review" }>): void {
  const l = landing(d, e.taskId);
  const task = d.tasks.get(e.taskId);
  if (!task) return;
  if (e.decision === "approve") {
    out.log(task.id, `approved by ${e.principal}`);
    return;
  }
  if (!l || l.stage !== "review") {
    out.log(task.id, `${e.decision} by ${e.principal} ignored: the task is not waiting for review`);
    return;
  }
  if (e.decision === "merge") {
    setStage(d, l, "merging", `merge approved by ${e.principal}`);
    out.log(task.id, `merge approved by ${e.principal}`);
    out.push({ kind: "merge", taskId: task.id });
    return;
  }
  changesRequested(
    d,
    out,
    task.id,
    `an operator (${e.principal}) requested changes${e.note ? `: ${e.note}` : ""}`,
  );
}

/**
 * A reviewer — an operator on the board, or a person on the host — requested changes: a new
 * attempt whose prompt holds `said` and their `comments`; no attempt is counted.
 */
function changesRequested(
  d: Draft,
  out: Out,
  taskId: string,
  said: string,
  comments = "",
): void {
  d.landings.delete(taskId);
  out.push({ kind: "reap", taskId, reason: "changes requested" });
  out.push({
    kind: "store",
    change: { op: "requeue", taskId, reason: said, countAttempt: false },
  });
  out.journal(ev.taskRetried({ task_id: taskId, reason: said }));
  d.notes.set(taskId, comments ? `${said}:\n${comments}` : said);
  out.log(taskId, `${said}; new attempt queued`);
}
