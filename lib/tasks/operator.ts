/** Operator-only task actions (cancel, reopen, operator completion). */
import type { Ctx } from "../http/context.ts";
import { DomainError } from "../errors.ts";

/** Throw 403 unless the caller holds scope `operator`. */
export function requireOperator(c: Ctx, action: string): void {
  const principal = c.get("principal");
  if (principal?.scope !== "operator") {
    throw new DomainError(
      "forbidden",
      "forbidden",
      `principal ${JSON.stringify(principal?.principal)} has scope ${
        JSON.stringify(principal?.scope)
      }; to ${action} the caller needs scope "operator"`,
    );
  }
}
