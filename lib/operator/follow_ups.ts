/**
 * Follow-ups an operator sends a task's agent from the board (issue 35). What is real for every
 * adapter: each follow-up is kept at `.sdd/messages/<task_id>.jsonl`, signed on the audit chain
 * (`board.follow_up`, binding the task and the text's digest) and, for a task of a run, journaled
 * (`task_follow_up`); a running agent reads them at `GET /tasks/<id>/messages` (its prompt tells
 * it to look after each step, with its own credential); every later attempt's prompt carries
 * them. An agent that never looks (a CLI that runs no commands) sees them at its next attempt
 * only — the board says "sent; the agent reads it when it looks, or at its next attempt".
 */
import { join } from "node:path";
import {
  appendAuditEntry,
  AuditChainBrokenError,
  type AuditPaths,
  retractAuditEntry,
} from "../audit/store.ts";
import { ConflictError } from "../errors.ts";
import type { Task } from "../tasks/task.ts";
import { taskFollowUp } from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { sha256Hex } from "../journal/hash.ts";
import { appendUnderLock, readWhole, takeBackLastLine } from "../util/locked_append.ts";
import type { Principal } from "../auth/tokens.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { MAX_FOLLOW_UP } from "../dashboard/operator_limits.ts";

/** The audit chain's event name of a follow-up. */
export const FOLLOW_UP_EVENT = "board.follow_up";

export { MAX_FOLLOW_UP } from "../dashboard/operator_limits.ts";

/** One follow-up as kept and served. */
export interface FollowUp {
  /** 1-based, in the order they were sent. */
  seq: number;
  /** ISO time it was sent. */
  at: string;
  principal: string;
  text: string;
}

/** `.sdd/messages/<task_id>.jsonl`. */
export function followUpsPath(paths: WorkspacePaths, taskId: string): string {
  return join(paths.sdd, "messages", `${taskId}.jsonl`);
}

/** The follow-ups of the lines of a messages file (lines that do not parse are skipped). */
export function parseFollowUps(text: string): FollowUp[] {
  const out: FollowUp[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const f = JSON.parse(line) as FollowUp;
      if (typeof f.seq === "number" && typeof f.text === "string") out.push(f);
    } catch { /* a torn line */ }
  }
  return out;
}

/** Every follow-up sent to `taskId`'s agent (after `seq` `after`), oldest first. */
export async function readFollowUps(
  paths: WorkspacePaths,
  taskId: string,
  after = 0,
): Promise<FollowUp[]> {
  const text = await Deno.readTextFile(followUpsPath(paths, taskId)).catch(() => "");
  return parseFollowUps(text).filter((f) => f.seq > after);
}

/** What {@link sendFollowUp} needs. */
export interface SendFollowUp {
  paths: WorkspacePaths;
  taskId: string;
  /** The run the task belongs to (its journal gets the row), if any. */
  runJournal?: string;
  text: string;
  principal: Principal;
  audit: AuditPaths;
  auditKey: () => Promise<Uint8Array>;
  now?: () => Date;
}

/** What was sent: the follow-up and its audit entry's line hash. */
export interface SentFollowUp {
  follow_up: FollowUp;
  audit_event_hash: string;
}

/**
 * Sign, keep and journal one follow-up, in that order; a broken audit chain refuses (409) before
 * anything is kept, and a follow-up that cannot be kept or journaled (a full disk) takes back
 * what was written before it, so the journal and the board never show one the agent cannot read.
 */
export async function sendFollowUp(o: SendFollowUp): Promise<SentFollowUp> {
  const now = (o.now ?? (() => new Date()))();
  const digest = "sha256:" + sha256Hex(new TextEncoder().encode(o.text));
  const path = followUpsPath(o.paths, o.taskId);
  let line = "";
  let sent: SentFollowUp;
  try {
    sent = await appendUnderLock(path, async (file) => {
      // Read under the file's lock: the sequence numbers never repeat.
      const seq = parseFollowUps(new TextDecoder().decode(await readWhole(file))).length + 1;
      const audit = await appendAuditEntry(o.audit, {
        event: FOLLOW_UP_EVENT,
        principal: o.principal.principal,
        data: { task_id: o.taskId, seq, text_sha256: digest, scope: o.principal.scope },
      }, { key: await o.auditKey(), now: () => now });
      const followUp: FollowUp = {
        seq,
        at: now.toISOString(),
        principal: o.principal.principal,
        text: o.text,
      };
      line = JSON.stringify(followUp);
      return {
        append: new TextEncoder().encode(line + "\n"),
        result: { follow_up: followUp, audit_event_hash: audit.lineHash },
        onWriteFailed: async () => void await retractAuditEntry(o.audit, audit.lineHash),
      };
    });
  } catch (e) {
    if (e instanceof AuditChainBrokenError) {
      throw new ConflictError("audit_chain_broken", e.message);
    }
    throw e;
  }
  if (!o.runJournal) return sent;
  try {
    await appendEvents(o.runJournal, [taskFollowUp({
      task_id: o.taskId,
      seq: sent.follow_up.seq,
      principal: o.principal.principal,
      text: o.text,
      audit_event_hash: sent.audit_event_hash,
    })]);
  } catch (e) {
    await takeBackLastLine(path, (l) => l === line);
    await retractAuditEntry(o.audit, sent.audit_event_hash);
    throw e;
  }
  return sent;
}

/**
 * 409 unless `task` is running (claimed or in progress): only a running agent can read a
 * follow-up, and a task that waits, failed or finished has none to read it.
 */
export function requireRunning(task: Pick<Task, "id" | "status">): void {
  if (task.status === "CLAIMED" || task.status === "IN_PROGRESS") return;
  throw new ConflictError(
    "task_not_running",
    `task ${task.id} is ${task.status}, not running: a follow-up goes to a running task's ` +
      "agent only. Send it once the task runs, or create a new task with it as the goal",
  );
}

/**
 * What is wrong with a follow-up's text (pure; undefined when nothing): empty once trimmed,
 * longer than {@link MAX_FOLLOW_UP}, or holding control characters other than newline and tab
 * (NUL, escape sequences a terminal would obey).
 */
export function followUpTextProblem(text: string): string | undefined {
  if (text.trim() === "") return "the follow-up is empty";
  if (text.length > MAX_FOLLOW_UP) {
    return `the follow-up is ${text.length} characters; at most ${MAX_FOLLOW_UP} are kept`;
  }
  // deno-lint-ignore no-control-regex
  const bad = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.exec(text);
  if (bad) {
    return `the follow-up holds the control character U+${
      bad[0].charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()
    }; send plain text (newlines and tabs are kept)`;
  }
  return undefined;
}

/** The follow-ups in words for an attempt's prompt (empty when there are none). */
export function followUpsNote(followUps: readonly FollowUp[]): string {
  if (followUps.length === 0) return "";
  return "FOLLOW-UPS FROM THE OPERATOR (oldest first; the newest wins where they disagree):\n" +
    followUps.map((f) => `- ${f.text.replaceAll("\n", "\n  ")}`).join("\n");
}
