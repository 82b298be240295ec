/**
 * What one agent is asked to do (pure): the prompt from the role template and the task, with
 * the previous attempt's note when there is one, the routed model (`model` wins, else
 * `complexity: low` takes the adapter's cheapest), and the adapter's argv.
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

/** Build the invocation of `task` for an agent working in `workdir`. */
export function agentInvocation(
  adapter: AgentAdapter,
  template: RoleTemplate,
  task: Task,
  settings: InvocationSettings & { workdir: string; retryNote?: string },
): Invocation {
  let prompt = renderPrompt(template, task);
  if (settings.retryNote) prompt += `\n\n${PREVIOUS_ATTEMPT} ${settings.retryNote}\n`;
  const model = settings.model ?? (task.complexity === "low" ? adapter.cheapestModel : undefined);
  const argv = adapter.buildArgv({
    prompt,
    model,
    effort: settings.effort,
    complexity: task.complexity,
    mcpConfigPath: adapter.acceptsMcpConfig ? settings.mcpConfigPath : undefined,
    workdir: settings.workdir,
  });
  return { prompt, model, argv };
}
