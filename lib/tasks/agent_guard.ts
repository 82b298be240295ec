/**
 * An agent's reports on its own task (docs/security.md "Agents"): the route already checked the
 * task id against the agent's credential (lib/http/bearer_auth.ts); here, against the task
 * itself, that the agent's session still holds it. A credential of an earlier attempt acts on
 * nothing once a retry has claimed the task under a new session.
 */
import type { Ctx } from "../http/context.ts";
import { DomainError } from "../errors.ts";
import type { Task } from "./task.ts";

/**
 * The session an agent caller speaks for (its credential's), after checking it holds `task`
 * and that a `session_id` it sent is its own; `sent` unchanged for any other caller.
 */
export function agentSession(c: Ctx, task: Task | undefined, sent?: string): string | undefined {
  const principal = c.get("principal");
  if (principal?.scope !== "agent") return sent;
  const own = principal.session_id!;
  if (sent !== undefined && sent !== own) {
    throw new DomainError(
      "forbidden",
      "forbidden",
      `agent session ${own} may not speak for session ${JSON.stringify(sent)}`,
    );
  }
  if (task && task.session_id !== own) {
    throw new DomainError(
      "forbidden",
      "forbidden",
      `agent session ${own} no longer holds task ${task.id}` +
        (task.session_id ? ` (session ${task.session_id} does)` : ""),
    );
  }
  return own;
}
