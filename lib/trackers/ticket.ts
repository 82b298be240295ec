/**
 * The normalised ticket (spec §2.13): what webhook deliveries and polls of every tracker turn
 * into before anything becomes a task, plus the small text and time helpers the adapters share.
 */
import { arr, obj, str } from "../util/json_fields.ts";

/** A ticket's identifying fields in its tracker's API (for write-back), e.g. `{repo, number}`. */
export type TicketRef = Record<string, string | number>;

/** What names a ticket and the project it is in: a ticket's `ref` and `raw.ids`, or a task's source. */
export interface TicketIdentity {
  ref: string;
  ids?: TicketRef;
}

/** One issue of one tracker, normalised. */
export interface Ticket {
  /** Adapter name (`tracker_a` … or a registered one). */
  tracker: string;
  /** Stable identity within the tracker (survives renames): the dedup key of tasks. */
  key: string;
  /** What people call it (`PROJ-7`, `octo/app#42`); seeds the task id. */
  ref: string;
  title: string;
  /** Plain text (Markdown kept, HTML and Jira's document format flattened). */
  body: string;
  labels: string[];
  /**
   * The event named no labels at all (no list in it, as some update events): `labels` is then
   * empty for want of knowing, and the task's role and label filter are left as they were.
   */
  labelsUnknown?: true;
  state: "open" | "closed";
  /** Link to the ticket in the tracker's web UI ("" when the tracker gives none). */
  url: string;
  /** Tracker facts: `updated_at` (ISO 8601, when known) and the ids write-back needs. */
  raw: { updated_at?: string; ids?: TicketRef; [extra: string]: unknown };
}

/** A time the trackers write in many forms (`+0100`, `2019-04-06 21:21:08 UTC`) as ISO 8601 UTC. */
export function isoTime(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) {
    const date = new Date(value > 1e12 ? value : value * 1000);
    return Number.isNaN(date.getTime()) ? undefined : date.toISOString(); // past year 275760
  }
  if (typeof value !== "string" || value === "") return undefined;
  const normalised = value
    .replace(/^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?) UTC$/, "$1T$2Z")
    .replace(/([+-]\d{2})(\d{2})$/, "$1:$2");
  const ms = Date.parse(normalised);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** Plain text of an HTML fragment (Plane sends `description_html`). */
export function htmlToText(html: string): string {
  return html
    .replace(/<\s*br\s*\/?>/gi, "\n")
    .replace(/<\/(p|div|li|h[1-6]|pre|blockquote)>/gi, "\n")
    .replace(/<li[^>]*>/gi, "- ")
    .replace(/<[^>]*>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Plain text of an Atlassian Document Format node (Jira REST v3 descriptions). */
export function adfToText(node: unknown): string {
  if (typeof node === "string") return node;
  if (!node || typeof node !== "object") return "";
  const n = node as { type?: string; text?: string; content?: unknown[]; attrs?: { url?: string } };
  if (n.type === "text") return n.text ?? "";
  if (n.type === "hardBreak") return "\n";
  const inner = arr(n.content).map(adfToText).join("");
  const block = ["paragraph", "heading", "codeBlock", "blockquote", "rule"];
  if (n.type === "listItem") return `- ${inner.trim()}\n`;
  if (n.type === "inlineCard") return n.attrs?.url ?? "";
  return block.includes(n.type ?? "") ? `${inner}\n` : inner;
}

/** Label names from `["a"]`, `[{name}]` or `[{title}]` (each tracker has its own). */
export function labelNames(value: unknown): string[] {
  return arr(value).map((l) => typeof l === "string" ? l : str(obj(l).name) || str(obj(l).title))
    .filter((l) => l !== "");
}

/** A ticket's `labels` from a payload's label list; `labelsUnknown` when it holds no list. */
export function ticketLabels(value: unknown): Pick<Ticket, "labels" | "labelsUnknown"> {
  return Array.isArray(value) ? { labels: labelNames(value) } : { labels: [], labelsUnknown: true };
}

/**
 * Why a normalised ticket cannot become a task (pure): a payload whose identity fields have the
 * wrong type (an issue number that is not a number, an id that is an object) yields an empty key
 * or a non-finite id. Undefined when the ticket is sound. The receiver answers such a delivery
 * 400 `invalid_payload` (the tracker stops retrying it); the sink ignores such a polled ticket.
 */
export function ticketProblem(ticket: Ticket): string | undefined {
  if (typeof ticket.key !== "string" || ticket.key.trim() === "") {
    return "the ticket has no identity (its id or number is missing or not a string or number)";
  }
  if (typeof ticket.ref !== "string" || typeof ticket.title !== "string") {
    return "the ticket's reference or title is not text";
  }
  for (const [field, value] of Object.entries(ticket.raw.ids ?? {})) {
    if (typeof value === "number" && !Number.isFinite(value)) {
      return `the ticket's ${field} is not a number`;
    }
    if (typeof value === "string" && value === "") return `the ticket's ${field} is missing`;
  }
  return undefined;
}

/** What a ticket did to the task queue. */
export interface TicketOutcome {
  ref: string;
  action: "created" | "updated" | "cancelled" | "reopened" | "retried" | "unchanged" | "ignored";
  task_id?: string;
  /** Why it was ignored or left unchanged. */
  reason?: string;
}

/** What a delivery's tickets did, in one line (`integrations list` shows it as the last delivery). */
export function outcomeSummary(outcomes: TicketOutcome[]): string {
  if (outcomes.length === 0) return "not an issue event: ignored";
  return outcomes.map((t) => `${t.ref} ${t.action}${t.task_id ? ` ${t.task_id}` : ""}`).join("; ");
}

/** Where tickets go (webhook route and pollers feed the same sink, spec §4.2 rule 7). */
export type TicketSink = (tickets: Ticket[]) => Promise<TicketOutcome[]>;
