/**
 * A task's detail as an agent's own credential may read it (pure). An agent session's credential
 * (scope `agent`, or a remote session's `session`) reads the board's task detail, but another
 * task's session logs are not served to it: they are other agents' output — what their CLIs
 * printed, an environment one printed among it — which `isolation: container` otherwise keeps
 * out of an agent's reach. The log's record (bytes, digest, whether it verifies) stays; its own
 * task's logs, and every log for a reader or an operator, are served whole.
 */
import type { Principal } from "../auth/tokens.ts";
import type { TaskDetailResponse } from "./types.ts";

/** `detail` with another task's log tails left out when `principal` is an agent session's. */
export function detailFor(principal: Principal | undefined, detail: TaskDetailResponse) {
  const agent = principal?.scope === "agent" || principal?.scope === "session";
  if (!agent || principal.task_id === detail.task.task_id) return detail;
  const attempts = detail.task.attempts.map((a) => {
    if (!a.log) return a;
    const { tail: _tail, truncated: _truncated, ...log } = a.log;
    return { ...a, log };
  });
  return { ...detail, task: { ...detail.task, attempts } };
}
