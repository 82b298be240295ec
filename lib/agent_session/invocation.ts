/**
 * What one agent is asked to do (pure): the prompt from the role template and the task, with
 * its leased ports, the interrupted work its worktree continues and the previous attempt's note
 * when there are,
 * the routed model (`model` wins, else `complexity: low` takes the adapter's cheapest), and the
 * adapter's argv.
 */
import type { AgentAdapter } from "../agents/adapters/types.ts";
import { renderPrompt, type RoleTemplate } from "../roles/templates.ts";
import type { Task } from "../tasks/task.ts";

/** Run-wide settings of invocations. */
export interface InvocationSettings {
  model?: string;
  effort?: string;
  mcpConfigPath?: string;
}

/** The prompt, the model (when routed) and the argv of one agent run. */
export interface Invocation {
  prompt: string;
  model?: string;
  argv: string[];
}

/** Marks the note of a previous attempt in a prompt. */
export const PREVIOUS_ATTEMPT = "PREVIOUS ATTEMPT:";

/** Marks the note that the worktree already holds an interrupted attempt's work. */
export const EARLIER_WORK = "EARLIER WORK:";

/** An interrupted attempt's work that the worktree was cut from. */
export interface EarlierWorkNote {
  /** Its session. */
  session: string;
  /** The target commit it was based on: `git diff <base>` shows all of it. */
  base: string;
}

/** Per-agent settings of {@link agentInvocation}. */
export interface AgentInvocationSettings extends InvocationSettings {
  workdir: string;
  /** Why the previous attempt did not land. */
  retryNote?: string;
  /** The worktree continues this interrupted attempt's work. */
  earlierWork?: EarlierWorkNote;
  /** Ports leased to the agent's worktree (DESIGN.md §13): the prompt says to serve on them. */
  ports?: number;
  /** The operators' follow-ups from the board, in words (lib/operator/follow_ups.ts). */
  followUps?: string;
}

/** Marks the note about the agent's leased ports. */
const PORTS_NOTE = "PORTS:";

/** What the agent is told when its worktree has `count` leased ports. */
function portsNote(count: number): string {
  return `${PORTS_NOTE} other agents work beside you on this project. Start any server (dev ` +
    "server, API, database) on the port in $PORT" +
    (count > 1 ? " (all your ports, comma-separated, are in $SERVICE_PORTS)" : "") +
    ", leased to you alone, never on the project's default port.";
}

/** What the agent is told when its worktree starts from an interrupted attempt's work. */
function earlierWorkNote(work: EarlierWorkNote): string {
  return `${EARLIER_WORK} an earlier attempt at this task (session ${work.session}) was ` +
    "interrupted before it reported. Its work is already in your worktree, committed on your " +
    `branch: \`git diff ${work.base.slice(0, 12)}\` shows everything it changed. Continue from ` +
    "it: check what is done and what is missing, finish the task, and report as described above.";
}

/** The model of `task`'s run: `model` (config or role) wins, else `complexity: low` routes cheap. */
export function routedModel(
  adapter: Pick<AgentAdapter, "cheapestModel">,
  task: Pick<Task, "complexity">,
  model?: string,
): string | undefined {
  return model ?? (task.complexity === "low" ? adapter.cheapestModel : undefined);
}

/** Build the invocation of `task` for an agent working in `workdir`. */
export function agentInvocation(
  adapter: AgentAdapter,
  template: RoleTemplate,
  task: Task,
  settings: AgentInvocationSettings,
): Invocation {
  let prompt = renderPrompt(template, task);
  if (settings.ports) prompt += `\n\n${portsNote(settings.ports)}\n`;
  if (settings.earlierWork) prompt += `\n\n${earlierWorkNote(settings.earlierWork)}\n`;
  if (settings.retryNote) prompt += `\n\n${PREVIOUS_ATTEMPT} ${settings.retryNote}\n`;
  if (settings.followUps) prompt += `\n\n${settings.followUps}\n`;
  const model = routedModel(adapter, task, settings.model);
  return { prompt, model, argv: invocationArgv(adapter, task, { ...settings, prompt, model }) };
}

/**
 * The adapter's argv for a prompt already rendered (a remote worker's, whose order carries the
 * orchestrator's prompt and routed model; its workdir and MCP settings are its own).
 */
export function invocationArgv(
  adapter: AgentAdapter,
  task: Pick<Task, "complexity">,
  settings: InvocationSettings & { prompt: string; workdir: string },
): string[] {
  return adapter.buildArgv({
    prompt: settings.prompt,
    model: settings.model,
    effort: settings.effort,
    complexity: task.complexity,
    mcpConfigPath: adapter.acceptsMcpConfig ? settings.mcpConfigPath : undefined,
    workdir: settings.workdir,
  });
}
