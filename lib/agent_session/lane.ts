/**
 * The run's agents, as the run loop wires them: the pool of this machine's agents, the guard
 * that parks rate-limited adapters, the fallbacks that are ready, the launch choice of the run,
 * and what the lane needs of the run's task work. Remote workers' sessions (lib/workers) read
 * an agent's end with the same diagnosis ({@link exitReason}).
 */
export {
  AgentPool,
  type AgentPoolOptions,
  type LiveAgent,
  type ReadyAdapter,
} from "./agent_pool.ts";
export { RateLimitGuard } from "./rate_limit_guard.ts";
export { containerFallbacks, readyFallbacks } from "./fallbacks.ts";
export { type AgentEnd, exitReason } from "./exit_reason.ts";
export { runLaunch } from "./run_isolation.ts";
export { HEARTBEAT_INTERVAL_MS } from "./session.ts";
export type { AgentWork, WorkHandle } from "./work.ts";
