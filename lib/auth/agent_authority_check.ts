/**
 * `doctor`'s word on what agents can reach (docs/security.md "Threat model"), pure: a failure
 * when service.yaml forwards a secret of the service into agents' environments (`agent_env`
 * naming a token variable, `SERVICE_TOKEN` or the audit key), and a warning while agents run
 * as host processes (`isolation: worktree`), which no credential check can contain.
 */
import type { CheckResult } from "../check_result.ts";
import type { TokenSpec } from "./tokens.ts";

/** What the check reads of service.yaml. */
export interface AgentAuthorityFacts {
  isolation: "worktree" | "container";
  /** `agent_env`, top level and every role's. */
  agentEnv: readonly string[];
  tokens: readonly TokenSpec[];
}

const SERVICE_SECRETS = ["SERVICE_TOKEN", "SERVICE_TOKEN_FILE", "SERVICE_AUDIT_KEY"];

/** The checks of `facts` (one or two results). */
export function agentAuthorityChecks(facts: AgentAuthorityFacts): CheckResult[] {
  const secrets = new Set([
    ...SERVICE_SECRETS,
    ...facts.tokens.flatMap((t) => [t.token_env, `${t.token_env}_FILE`]),
  ]);
  const leaked = [...new Set(facts.agentEnv.filter((n) => secrets.has(n)))];
  const results: CheckResult[] = [];
  if (leaked.length > 0) {
    results.push({
      name: "agent authority",
      ok: false,
      detail: `agent_env forwards ${leaked.join(", ")} to every agent: an agent would hold ` +
        "what only the service or an operator may hold (its own credential is minted for it)",
      fix: `remove ${leaked.join(", ")} from agent_env in service.yaml`,
    });
  }
  if (facts.isolation === "worktree") {
    results.push({
      name: "agent authority",
      ok: true,
      warning: true,
      detail: "isolation: worktree runs agents as you, on this machine: each gets a credential " +
        "for its own task only, but it can read what you can (.sdd/, the audit key, your " +
        "tokens) and call the server's main address as the local operator" +
        (facts.tokens.length === 0 ? " (no token is configured)" : "") +
        ". Only isolation: container is a boundary (docs/security.md)",
      fix: "set isolation: container (docs/isolation.md) for agents you do not trust",
    });
  }
  return results;
}
