/**
 * The adapter contract: how the service turns a task into the argv of one agent CLI and reads
 * back what that CLI spent. Adapters are plain data plus two pure functions.
 */

/** Token and cost figures of one model inside one agent session. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  /** Cost in integer micro-USD (1 USD = 1_000_000). */
  microUsd: number;
}

/** What one agent session spent, as parsed from the CLI's own output. */
export interface UsageReport {
  /** Total cost in integer micro-USD. */
  microUsd: number;
  /** Per-model breakdown; keys are the model names the CLI reported. */
  byModel: Record<string, ModelUsage>;
  /** `reported`: the CLI printed a cost; `estimated`: tokens × the price table of `cost.ts`. */
  source: "reported" | "estimated";
}

/** What a task asks of an agent run. */
export interface AdapterInput {
  prompt: string;
  /** `model` from the config or the plan; wins over complexity routing. */
  model?: string;
  /** `effort` from the config; used only by adapters with `supportsEffort`. */
  effort?: string;
  /** Plan step complexity; `low` routes to the adapter's `cheapestModel`. */
  complexity?: "low" | "medium" | "high";
  /** Runtime MCP configuration file; used only by adapters with `acceptsMcpConfig`. */
  mcpConfigPath?: string;
  /** The agent's worktree (also its working directory). */
  workdir: string;
}

/** One agent CLI. */
export interface AgentAdapter {
  /** Name used by `cli:` in service.yaml. */
  name: string;
  /** Executable, resolved by a PATH lookup at preflight. */
  binary: string;
  /** Provider key variables; any one of them being set is enough. Empty: no key needed. */
  apiKeyEnv: string[];
  /** Provider endpoint and auxiliary variables forwarded to the agent besides the keys. */
  passEnv: string[];
  /**
   * Key variables accepted instead of `apiKeyEnv` when an endpoint variable is set, e.g. a local
   * gateway named by `ANTHROPIC_BASE_URL` that takes `ANTHROPIC_AUTH_TOKEN`.
   */
  gatewayKeyEnv?: Record<string, string[]>;
  /** Model chosen for `complexity: low`. */
  cheapestModel?: string;
  /** True when the CLI takes a runtime MCP configuration file. */
  acceptsMcpConfig: boolean;
  /** Variables set for the CLI when it is given a runtime MCP configuration (docs/mcp.md). */
  mcpEnv?: Readonly<Record<string, string>>;
  /** True when the CLI takes an effort / reasoning level. */
  supportsEffort: boolean;
  /** The argv after the binary for one non-interactive, headless run. */
  buildArgv(input: AdapterInput): string[];
  /** The usage of a finished run, from its log; undefined when the log names none. */
  parseUsage(logText: string): UsageReport | undefined;
}
