/**
 * The selected task: where it stands and why, its attempts and logs, its diff and evidence, and
 * the review actions that still apply to it. A task with no card yet (planned, waiting,
 * blocked) shows its state and reason only.
 */
import type { Card, Column, Decision } from "../lib/board/types.ts";
import type { ProjectionReceipt } from "../lib/board/types.ts";
import type { TaskDetailResponse } from "../lib/review/types.ts";
import type { OutlineTask } from "../lib/board/activity_types.ts";
import { COLUMN_LABELS } from "./parts/board_columns.tsx";
import { AttemptsView } from "./parts/attempts_view.tsx";
import { fewPaths } from "./parts/card_view.tsx";
import { DiffViewer } from "./diff_viewer.tsx";
import { EvidencePanel } from "./evidence_panel.tsx";
import { NoEvidence } from "./parts/evidence_view.tsx";
import { ReviewActions } from "./review_actions.tsx";
import { useApi } from "./_use_api.ts";
import { TaskHeading } from "./parts/task_heading.tsx";
import { FollowUpForm } from "./operator_actions.tsx";
import { useRef, useState } from "preact/hooks";
import { sizeText, tooLargeWords } from "../lib/util/size_words.ts";
import {
  cardKey,
  changedSinceSeen,
  seenAfter,
  type ShownTask,
} from "../lib/dashboard/seen_task.ts";

/** Props of {@link TaskDetail}. */
export interface TaskDetailProps {
  receipt: ProjectionReceipt;
  taskId: string;
  /** Absent while the task has no card on the board. */
  card?: Card;
  column?: Column;
  /** The task as the run outline has it (where its current attempt starts). */
  task?: OutlineTask;
  token: string;
  onBoard: (receipt: ProjectionReceipt) => void;
  onReload: () => void;
}

/**
 * The decisions that apply to a card in `column` (the server refuses a merge or a request for
 * changes anywhere but needs review, and of a completion that changed nothing), or why none do.
 */
export function applicableDecisions(
  column: Column,
  state?: OutlineTask["state"],
): { decisions: Decision[]; why?: string } {
  if (state === "unchanged") {
    return {
      decisions: [],
      why: "Nothing to decide: its work changes nothing on the target branch, so nothing was " +
        "merged and the task is closed.",
    };
  }
  switch (column) {
    case "needs_review":
      return { decisions: ["approve", "request_changes", "merge"] };
    case "gated":
      return {
        decisions: ["approve"],
        why: "Merge and Request changes are off: the latest attempt did not pass (see its reason " +
          "above), and no agent waits for a review to act on (a FAILED task gets a new attempt " +
          "with `service retry`).",
      };
    case "merged":
      return {
        decisions: [],
        why: "Nothing to decide: the task is merged (or its merge is on the way).",
      };
    default:
      return { decisions: [], why: "Nothing to review yet: the agent has not finished." };
  }
}

/** What the diff below is held for, and whether it is whole (DESIGN.md §18, §4). */
function DiffNotices({ task }: { task: TaskDetailProps["task"] }) {
  return (
    <>
      {task?.protected_paths && task.protected_paths.length > 0 && (
        <p data-protected-notice>
          <span class="badge bad">PROTECTED</span>{" "}
          This diff changes protected path{task.protected_paths.length === 1 ? "" : "s"}{" "}
          ({fewPaths(task.protected_paths, 8)}): it lands only when an operator merges it here.
        </p>
      )}
      {task?.oversized_files && (
        <p data-oversized-notice>
          <span class="badge bad">TOO LARGE</span> This diff adds or grows{" "}
          {task.oversized_files.files.slice(0, 8).map((f) => `${f.path} (${sizeText(f.bytes)})`)
            .join(", ")}
          {(task.oversized_files.files_total ?? 0) > 8
            ? ` and ${task.oversized_files.files_total! - 8} more`
            : ""}, over max_landed_file_mb
          {task.oversized_files.limit_bytes !== undefined
            ? ` (${sizeText(task.oversized_files.limit_bytes)})`
            : ""}: it lands only when an operator merges it here.
        </p>
      )}
      {task?.diff_truncated && (
        <p data-diff-too-large>
          <span class="badge bad">PARTIAL</span> {tooLargeWords(task.diff_truncated)}
          {"; below are its first whole files (the stored diff, as its hash says)."}
        </p>
      )}
    </>
  );
}

/** Everything an operator needs to decide on one task. */
export function TaskDetail(
  { receipt, taskId, card, column, task, token, onBoard, onReload }: TaskDetailProps,
) {
  const runId = receipt.run_id;
  const version = `${card?.diff?.sha256 ?? "none"}:${receipt.journal_verified}`;
  const detailPath = `/review-board/runs/${encodeURIComponent(runId)}/tasks/${
    encodeURIComponent(taskId)
  }`;
  // The detail changes with every row about the task: refetch whenever the journal grows.
  const detail = useApi<TaskDetailResponse>(detailPath, token, receipt.journal_head);
  const applicable = column ? applicableDecisions(column, task?.state) : undefined;
  // What the operator has seen of this task: the If-Match of a review (live refreshes that
  // change the task itself wait until the operator says they looked again).
  const shown: ShownTask = {
    taskId: `${runId}/${taskId}`,
    hash: receipt.projection_hash,
    card: cardKey(column, card),
  };
  const seen = useRef<ShownTask>(shown);
  seen.current = seenAfter(seen.current, shown);
  const [looks, setLooks] = useState(0);
  return (
    <section class="detail" aria-labelledby="task-heading">
      <TaskHeading
        taskId={taskId}
        where={column ? COLUMN_LABELS[column] : "not started"}
        title={card?.title}
      />
      <section aria-labelledby="attempts-heading">
        <h3 id="attempts-heading">What happened</h3>
        {detail.status === "loading" && <p class="muted">loading…</p>}
        {detail.status === "error" && <p class="error" role="alert">{detail.error.words}</p>}
        {detail.status === "ok" && <AttemptsView detail={detail.value.task} />}
      </section>
      {card && column && applicable && (
        <>
          <section aria-labelledby="diff-heading">
            <h3 id="diff-heading">Diff</h3>
            {task?.diff_index !== undefined && task.current_since !== undefined &&
              task.diff_index < task.current_since && (
              <p class="muted" data-earlier-diff>
                The diff of an earlier attempt: attempt {task.attempts}{" "}
                has not captured its own yet.
              </p>
            )}
            <DiffNotices task={task} />
            <DiffViewer
              captured={card.diff !== undefined}
              runId={runId}
              taskId={taskId}
              token={token}
              version={version}
              protectedPaths={task?.protected_paths}
            />
          </section>
          <section aria-labelledby="evidence-heading">
            <h3 id="evidence-heading">Evidence</h3>
            {
              /* The detail says when there is no bundle: the page never requests one that is not
                 there (the browser logs a 404 as an error). */
            }
            {detail.status === "loading"
              ? <p class="muted">loading evidence…</p>
              : detail.status === "ok" && detail.value.evidence_absent
              ? <NoEvidence code={detail.value.evidence_absent.code} />
              : <EvidencePanel runId={runId} taskId={taskId} token={token} version={version} />}
          </section>
          <section aria-labelledby="review-heading">
            <h3 id="review-heading">Review</h3>
            <ReviewActions
              // A new attempt (or a rebased diff) starts a new review: the last receipt is history.
              key={`${runId}/${taskId}/${task?.current_since ?? ""}`}
              runId={runId}
              taskId={taskId}
              projectionHash={seen.current.hash}
              changedWhileLooking={changedSinceSeen(seen.current, shown)}
              onLookedAgain={() => {
                seen.current = shown;
                setLooks(looks + 1);
              }}
              disabled={!receipt.journal_verified}
              decisions={applicable.decisions}
              why={applicable.why}
              token={token}
              onBoard={(answered) => {
                // The board its own review answered is one the operator saw.
                seen.current = { ...shown, hash: answered.projection_hash };
                onBoard(answered);
              }}
              onReload={() => {
                seen.current = shown;
                onReload();
              }}
            />
          </section>
        </>
      )}
      <section aria-labelledby="follow-up-heading">
        <h3 id="follow-up-heading">Follow-ups</h3>
        <FollowUpForm
          taskId={taskId}
          token={token}
          sent={detail.status === "ok" ? detail.value.task.follow_ups : undefined}
          running={task?.state === "running"}
        />
      </section>
    </section>
  );
}
