/**
 * A failed gate (a failed signal of `task_verification_failed`, DESIGN.md §4) in words — one
 * policy for the terminal, `service status` and the board's card (pure; also bundled into the
 * board's page). A quality gate is named by its name; what it said is the line of its output that
 * reads like an error (lib/util/last_error_line.ts), with how it ended as the gate's runner appends
 * it (`[exit 1]`, `[timed out after 120 s]`, lib/janitor/signals.ts); its shell command stays in
 * the task's detail.
 */
import { lastErrorLine } from "../util/last_error_line.ts";

/** A gate receipt's fields, when it is an object. */
function gateFields(gate: unknown): Record<string, unknown> | undefined {
  return gate && typeof gate === "object" && !Array.isArray(gate)
    ? gate as Record<string, unknown>
    : undefined;
}

/** `kind` and, for a quality gate, its name: `quality_gate tests`. */
function gateName(g: Record<string, unknown>): string {
  const kind = String(g.kind ?? "signal");
  return typeof g.name === "string" && g.name ? `${kind} ${g.name}` : kind;
}

/** A gate receipt in words with its detail (the command): `kind name: detail`. */
export function gateText(gate: unknown): string {
  const g = gateFields(gate);
  if (!g) return JSON.stringify(gate);
  const d = String(g.detail ?? "");
  // "cancelled: cancelled: …" says it twice
  return d.startsWith(`${String(g.kind ?? "signal")}:`) ? d : `${gateName(g)}: ${d}`;
}

/** The line the gate's runner appends to its output: how it ended (lib/janitor/signals.ts). */
const END_LINE = /^\[(exit -?\d+|timed out after \d+ s)\]$/;

/**
 * What a failed gate said, in one line of at most `maxChars` characters of its output:
 * `quality_gate tests (exit 1): failed: test/parse.js`; {@link gateText} for a gate without
 * output.
 */
export function gateSaid(gate: unknown, maxChars = 300): string {
  const g = gateFields(gate);
  if (!g || typeof g.output_tail !== "string") return gateText(gate);
  const lines = g.output_tail.split("\n").map((l) => l.trim()).filter(Boolean);
  const end = END_LINE.exec(lines.at(-1) ?? "");
  if (end) lines.pop();
  // Cut to one character past the limit first, so a longer line is known to be cut.
  const said = lastErrorLine(lines.map((l) => l.slice(0, maxChars + 1)));
  if (said === undefined) return gateText(gate);
  const quoted = said.length > maxChars ? `${said.slice(0, maxChars)}…` : said;
  return `${label(g)}${end ? ` (${end[1]})` : ""}: ${quoted}`;
}

/** The longest part of a signal's detail that names it (a command, a path) in its line. */
const LABEL_DETAIL_CHARS = 80;

/**
 * How a line names a gate: a quality gate by its name; a completion signal, which has none, by
 * its kind and detail (`test_passes npm test`).
 */
function label(g: Record<string, unknown>): string {
  if (typeof g.name === "string" && g.name) return gateName(g);
  const d = String(g.detail ?? "");
  if (!d) return gateName(g);
  return `${gateName(g)} ${
    d.length > LABEL_DETAIL_CHARS ? `${d.slice(0, LABEL_DETAIL_CHARS)}…` : d
  }`;
}
