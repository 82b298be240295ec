/** What the service needs from an agent command-line program (one adapter per CLI). */

/** Input of {@link AgentAdapter.buildArgv}. */
export interface AgentInvocation {
  prompt: string;
  model?: string;
  effort?: string;
  mcpConfigPath?: string;
}

/** An agent CLI: its binary, the provider's key variables, and how to build its argv. */
export interface AgentAdapter {
  /** Registered name, the value of `cli` in service.yaml. */
  name: string;
  /** Executable looked up on PATH. */
  binary: string;
  /** Provider API-key variables; any one being set is enough. Empty when none is needed. */
  apiKeyEnv: string[];
  /** The argv (without the binary) that runs one prompt. */
  buildArgv(input: AgentInvocation): string[];
}

/** Settings an adapter factory may read (the `generic` adapter reads its command from them). */
export interface AdapterSettings {
  cli_command?: string[];
  prompt_flag?: string;
  model_flag?: string;
}

/** Builds an adapter from the configuration. */
export type AdapterFactory = (settings: AdapterSettings) => AgentAdapter;
