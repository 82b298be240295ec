/**
 * The words of a pull request the service opens (pure): its title is the task's; its body says
 * what was asked, what the agent reported, which gates and completion signals passed on the
 * tree the merge would produce, and links the task on the review board. A hidden marker names
 * the task and run, so a person (or a later process) can tell whose it is.
 */
import { protectedSection } from "./protected_section.ts";

/** One check that passed locally (a completion signal or a quality gate). */
export interface PassedCheck {
  kind: string;
  detail: string;
  name?: string;
}

/** What the body is written from. */
export interface PullRequestText {
  taskId: string;
  runId: string;
  title: string;
  goal: string;
  /** The agent's own summary of its work, when it reported one. */
  summary?: string | null;
  /** Checks that passed on the tree the merge would produce. */
  passed: PassedCheck[];
  /** The review board's base URL. */
  boardUrl?: string;
  /** The pull request of an earlier attempt this one replaces (`#12`). */
  supersedes?: string;
  /** Protected paths the change touches: it merges only on an operator's decision. */
  protectedPaths?: string[];
}

/** Characters of the goal and the summary kept in a body (hosts cap bodies at ~65 000). */
const TEXT_CHARS = 6000;

function clip(text: string): string {
  const t = text.trim();
  return t.length > TEXT_CHARS ? `${t.slice(0, TEXT_CHARS)}\n… (shortened)` : t;
}

/** Quote `text` as a Markdown block quote. */
function quote(text: string): string {
  return clip(text).split("\n").map((l) => `> ${l}`).join("\n");
}

/** The title: the task's, on one line. */
export function pullRequestTitle(t: Pick<PullRequestText, "taskId" | "title">): string {
  const title = t.title.replace(/\s+/g, " ").trim() || `task ${t.taskId}`;
  return title.length > 200 ? `${title.slice(0, 199)}…` : title;
}

/** The body (Markdown). */
export function pullRequestBody(t: PullRequestText): string {
  const lines = [
    `<!-- service task=${t.taskId} run=${t.runId} -->`,
    `Opened by the service for task \`${t.taskId}\` of run \`${t.runId}\`.` +
    (t.supersedes ? ` It replaces ${t.supersedes}, whose attempt did not land.` : ""),
    "",
    "### What was asked",
    "",
    quote(t.goal || t.title),
    "",
    "### What the agent reported",
    "",
    t.summary?.trim() ? quote(t.summary) : "_The agent did not report a summary._",
    "",
    "### Checked before this was pushed",
    "",
  ];
  if (t.passed.length === 0) {
    lines.push("_No completion signals or quality gates are configured for this task._");
  } else {
    lines.push("Passed on the tree this pull request would produce:", "");
    for (const c of t.passed) {
      lines.push(
        c.name ? `- ${c.kind} \`${c.name}\`: \`${c.detail}\`` : `- ${c.kind}: \`${c.detail}\``,
      );
    }
  }
  lines.push(...protectedSection(t.protectedPaths ?? []));
  if (t.boardUrl) {
    const query = new URLSearchParams({ run: t.runId, task: t.taskId });
    lines.push(
      "",
      `Review board: ${t.boardUrl.replace(/\/+$/, "")}/dashboard/review-board?${query}`,
    );
  }
  return lines.join("\n") + "\n";
}
