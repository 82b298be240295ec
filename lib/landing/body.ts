/**
 * The words of a pull request the service opens (pure): its title is the task's; its body says
 * what was asked, what the agent reported, which gates and completion signals passed on the
 * tree the merge would produce, and links the task on the review board. A hidden marker names
 * the task and run, so a person (or a later process) can tell whose it is. What an agent or a
 * ticket wrote is quoted verbatim ({@link quoteVerbatim}): it can neither ping people nor hide
 * text in the body.
 */
import { oversizedSection, protectedSection } from "./protected_section.ts";

import { printable } from "../util/printable.ts";

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
  /** Files over `max_landed_file_mb` it adds or grows: it merges only on an operator's decision. */
  oversized?: { files: { path: string; bytes: number }[]; limitBytes: number };
}

/** Characters of the goal and the summary kept in a body (hosts cap bodies at ~65 000). */
const TEXT_CHARS = 6000;

/** The longest run of backticks in `text` (0 when it has none). */
function longestBacktickRun(text: string): number {
  return Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
}

/**
 * Quote text written by someone else (an agent's summary, a ticket's goal) so that the host
 * shows it as it was written and does nothing it says: a fenced code block, whose fence is
 * longer than any run of backticks inside, so nothing inside can close it. GitHub and GitLab
 * (CommonMark) neither notify `@mentions`, link `#12` references nor render HTML, comments or
 * images inside one; line breaks and spacing are kept. Line endings become `\n` (a lone `\r` is
 * a line ending in CommonMark, and reads as one); a long text is shortened outside the fence.
 */
export function quoteVerbatim(text: string): string {
  const normal = text.replace(/\r\n?/g, "\n").replace(/^\n+|\s+$/g, "");
  const kept = normal.length > TEXT_CHARS ? normal.slice(0, TEXT_CHARS) : normal;
  const fence = "`".repeat(Math.max(3, longestBacktickRun(kept) + 1));
  return `${fence}text\n${kept}\n${fence}` + (kept === normal ? "" : "\n\n_… (shortened)_");
}

/** `text` as an inline code span that nothing inside can end early (CommonMark's rule). */
function code(text: string): string {
  const one = text.replace(/[\r\n]+/g, " ");
  const ticks = "`".repeat(longestBacktickRun(one) + 1);
  const pad = one.startsWith("`") || one.endsWith("`") ? " " : "";
  return `${ticks}${pad}${one}${pad}${ticks}`;
}

/** The title: the task's (a ticket's, maybe), on one line, no control character in it. */
export function pullRequestTitle(t: Pick<PullRequestText, "taskId" | "title">): string {
  const title = printable(t.title.replace(/\s+/g, " ").trim()) || `task ${t.taskId}`;
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
    quoteVerbatim(t.goal || t.title),
    "",
    "### What the agent reported",
    "",
    t.summary?.trim() ? quoteVerbatim(t.summary) : "_The agent did not report a summary._",
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
        c.name
          ? `- ${c.kind} ${code(c.name)}: ${code(c.detail)}`
          : `- ${c.kind}: ${code(c.detail)}`,
      );
    }
  }
  lines.push(...protectedSection(t.protectedPaths ?? []));
  lines.push(...oversizedSection(t.oversized));
  if (t.boardUrl) {
    const query = new URLSearchParams({ run: t.runId, task: t.taskId });
    lines.push(
      "",
      `Review board: ${t.boardUrl.replace(/\/+$/, "")}/dashboard/review-board?${query}`,
    );
  }
  return lines.join("\n") + "\n";
}
