/**
 * What a worker session's routes check of the capability that called them, beyond its worker and
 * session (lib/http/bearer_auth.ts binds those to the path): the body names the capability's own
 * task (and session).
 */
import { DomainError } from "../errors.ts";
import type { Principal } from "../auth/tokens.ts";

/** 403 unless `principal`, a worker's session capability, is the one of `taskId` (`sessionId`). */
export function sessionOfCapability(
  principal: Principal,
  taskId: string,
  sessionId?: string,
): void {
  const session = principal.session_id;
  if (principal.task_id === taskId && (sessionId === undefined || sessionId === session)) return;
  throw new DomainError(
    "forbidden",
    "forbidden",
    `this capability is session ${session}'s of task ${principal.task_id}; it does not speak ` +
      `for task ${JSON.stringify(taskId)}${
        sessionId === undefined ? "" : ` session ${JSON.stringify(sessionId)}`
      }`,
  );
}
