/** `doctor`'s look at auth: every token configured in service.yaml has a value to check against. */
import type { CheckResult } from "../check_result.ts";
import { assertTokenVariablesSet, type TokenSpec, TokenVariableUnsetError } from "./tokens.ts";
import { secretEnv } from "./secret_env.ts";

/** A failed check naming each unset token variable; nothing when all are set or none is configured. */
export function tokenVariablesResult(
  tokens: TokenSpec[],
  env: (name: string) => string | undefined = (n) => secretEnv(n),
): CheckResult[] {
  try {
    assertTokenVariablesSet(tokens, env);
    return [];
  } catch (e) {
    if (!(e instanceof TokenVariableUnsetError)) throw e;
    return [{
      name: "auth tokens",
      ok: false,
      detail: `unset or empty: ${
        e.missing.map((s) => `${s.token_env} (principal ${s.principal})`).join(", ")
      }; \`service serve\` and \`service run\` refuse to start`,
      fix: e.fix,
    }];
  }
}
