/**
 * Names the launcher gives the Kubernetes API (pure), within the API server's rules: a Job's
 * name is a DNS-1123 label of at most 63 characters (its pods carry it as the `job-name` label);
 * a label value is at most 63 letters, digits, `-`, `_` or `.`, starting and ending with a
 * letter or digit. Run, task and session ids allow more (128 characters, a trailing `.`), so
 * one that is not a valid label value is labelled by a digest, and the exact id travels in an
 * annotation, which has no such limit.
 */
import { sha256Hex } from "../journal/hash.ts";

/** The label naming the run of a Job (and of its pod). */
export const RUN_LABEL = "service.run";
/** The label naming the task a Job was created for. */
export const TASK_LABEL = "service.task";
/** The label naming the session its pod claims the task as. */
export const SESSION_LABEL = "service.session";
/** The label naming the task's role. */
export const ROLE_LABEL = "service.role";
/** Annotations with the exact ids (labels may hold digests of them). */
export const RUN_ANNOTATION = "service.run-id";
export const TASK_ANNOTATION = "service.task-id";
export const SESSION_ANNOTATION = "service.session-id";

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** True when `value` is a label value the API server accepts. */
export function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

/** True when `name` is a Job name the API server accepts (a DNS-1123 label, at most 63). */
export function isJobName(name: string): boolean {
  return name.length <= 63 && DNS_LABEL.test(name);
}

/** `id` as a label value: itself when valid, else `h.` and 40 hex of its SHA-256. */
export function labelValue(id: string): string {
  return isLabelValue(id) ? id : `h.${sha256Hex(id).slice(0, 40)}`;
}

/** Lower-case letters, digits and single `-`, at most `max` characters, trimmed of `-`. */
function slug(text: string, max: number): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").slice(0, max).replace(/^-+|-+$/g, "");
}

/**
 * The Job of `taskId`'s session `sessionId`: `svc-<task, made a label>-<8 hex of the session>`,
 * at most 53 characters so that its pods' names (`<job>-xxxxx`) are whole host names too.
 */
export function jobName(taskId: string, sessionId: string): string {
  const task = slug(taskId, 40) || "task";
  return `svc-${task}-${sha256Hex(sessionId).slice(0, 8)}`;
}

/** The label selector of the Jobs (and pods) of run `runId`. */
export function runSelector(runId: string): string {
  return `${RUN_LABEL}=${labelValue(runId)}`;
}
