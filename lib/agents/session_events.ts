/**
 * What an agent's session log says, as typed events. Each adapter knows its CLI's output format
 * (Claude Code stream-json, Codex JSONL, Gemini CLI stream-json, plain text) and turns a log into
 * these events once (`AgentAdapter.parseLog`, lib/agents/adapters/*_log.ts); the readers take the
 * events and know no format: usage (./usage.ts), rate limits (./rate_limit.ts), exit diagnosis
 * (./exit_diagnosis.ts) and test runs (lib/verification/test_run_detector.ts).
 *
 * A new kind of line is one more member of {@link SessionEvent}, produced by the adapters whose
 * CLI prints it and read by whoever needs it (a usage-limit message naming its reset time is
 * {@link UsageLimitEvent}, read by the rate-limit reader).
 */
import type { TokenCounts } from "../cost/prices.ts";
import type { ResetTime } from "./reset_time.ts";

/** Where a tool's output was read from. */
export type OutputSource = "claude_tool_result" | "codex_command" | "gemini_tool_output";

/** Where an event stands in the parsed text. */
interface At {
  /** 1-based line of the parsed text. */
  line: number;
  /** The line as written. */
  raw: string;
}

/** A line of plain output (not structured): what a CLI or a command printed. */
export interface TextEvent extends At {
  kind: "text";
}

/** The CLI's session started: its own session (thread) id and model, when it names them. */
export interface SessionStartEvent extends At {
  kind: "session";
  id?: string;
  model?: string;
}

/**
 * The model's own words or the CLI's bookkeeping (turn markers, heartbeats, a successful final
 * result): evidence of nothing, and never an error, whatever it mentions.
 */
export interface MessageEvent extends At {
  kind: "message";
}

/** A tool call (its input), or tool traffic whose output is not read. */
export interface ToolCallEvent extends At {
  kind: "tool_call";
  /** The id that pairs it with its output. */
  id?: string;
  /** The tool's name as the CLI calls it (`Bash`, `run_shell_command`, …). */
  name?: string;
}

/** The output of a tool the agent ran (a shell command's output, a file it read). */
export interface ToolOutputEvent extends At {
  kind: "tool_output";
  /** The id of its call ({@link ToolCallEvent.id}). */
  id?: string;
  text: string;
  source: OutputSource;
}

/** A structured line the CLI marks as an error (an error event, a failed turn or result). */
export interface ErrorEvent extends At {
  kind: "error";
  /** Its human part: the error's message (a provider's own message when it is wrapped). */
  message: string;
}

/** The provider's own structured throttling signal (e.g. a rejected `rate_limit_event`). */
export interface RateLimitEvent extends At {
  kind: "rate_limit";
  /** Which signal it is, e.g. `claude:rate_limit_event_rejected`. */
  rule: string;
}

/**
 * A provider's usage or rate limit, in the CLI's own words or signal, naming when it resets
 * (Claude Code's "You've hit your session limit · resets 3pm (UTC)" or its rejected
 * `rate_limit_event` with `resetsAt`, Codex's "… try again at 3:42 PM", Gemini's "Please retry in
 * 34s"): the adapter is parked until then (./rate_limit.ts, ./cooldown.ts).
 */
export interface UsageLimitEvent extends At {
  kind: "usage_limit";
  /** Which message it is, e.g. `claude:usage_limit`, `claude:rate_limit_event_rejected`. */
  rule: string;
  reset: ResetTime;
}

/** A structured line of no kind above. */
export interface RecordEvent extends At {
  kind: "record";
  /** Its `message` (or `error.message`), when it has one. */
  message?: string;
}

/** Tokens and cost of one model, as the CLI counted them. */
export interface ModelTokens extends TokenCounts {
  /** The cost the CLI printed for this model, in USD. */
  costUsd?: number;
}

/**
 * What the session spent as the CLI stated it, at the line that stated it last. A parse yields
 * at most one, as its last event. Pricing is the usage reader's (./usage.ts).
 */
export interface UsageEvent extends At {
  kind: "usage";
  /** Tokens per model; a model the CLI names without tokens is kept (it names the model). */
  models: Record<string, ModelTokens>;
  /** The session's total cost the CLI printed, in USD: present means the cost is reported. */
  costUsd?: number;
}

/** One thing a session log says. */
export type SessionEvent =
  | TextEvent
  | SessionStartEvent
  | MessageEvent
  | ToolCallEvent
  | ToolOutputEvent
  | ErrorEvent
  | RateLimitEvent
  | UsageLimitEvent
  | RecordEvent
  | UsageEvent;

/** An adapter's reading of its CLI's log text (pure). */
export type LogParser = (logText: string) => SessionEvent[];
