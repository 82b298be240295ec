/**
 * The adapter registry: `cli` in service.yaml names one of these. Built-in adapters are
 * registered here by name, binary and key variables; their argv builders live in
 * lib/agents/adapters/ and replace these placeholders when they register under the same name.
 */
import type { AdapterFactory, AdapterSettings, AgentAdapter } from "./adapter.ts";

/** `cli` names an adapter nobody registered (spec §7.3). */
export class ValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ValueError";
  }
}

/** Thrown by a placeholder adapter asked to build an argv before its real builder exists. */
export class AdapterNotImplementedError extends Error {
  constructor(name: string) {
    super(`the ${name} adapter cannot build an agent command line yet (arrives with issue 5)`);
    this.name = "AdapterNotImplementedError";
  }
}

const adapters = new Map<string, AdapterFactory>();

/** Register (or replace) the adapter `name`. */
export function registerAdapter(name: string, factory: AdapterFactory): void {
  adapters.set(name, factory);
}

/** Names of every registered adapter, sorted. */
export function listAdapters(): string[] {
  return [...adapters.keys()].sort();
}

/** True when `name` is registered. */
export function hasAdapter(name: string): boolean {
  return adapters.has(name);
}

/** The adapter `name` built from `settings`, or `ValueError: Unknown adapter` listing the rest. */
export function getAdapter(name: string, settings: AdapterSettings = {}): AgentAdapter {
  const factory = adapters.get(name);
  if (!factory) {
    throw new ValueError(
      `Unknown adapter '${name}'. Available adapters: ${listAdapters().join(", ")}`,
    );
  }
  return factory(settings);
}

function placeholder(name: string, binary: string, apiKeyEnv: string[]): AdapterFactory {
  return () => ({
    name,
    binary,
    apiKeyEnv,
    buildArgv() {
      throw new AdapterNotImplementedError(name);
    },
  });
}

registerAdapter("claude", placeholder("claude", "claude", ["ANTHROPIC_API_KEY"]));
registerAdapter("codex", placeholder("codex", "codex", ["OPENAI_API_KEY"]));
registerAdapter("gemini", placeholder("gemini", "gemini", ["GEMINI_API_KEY", "GOOGLE_API_KEY"]));
registerAdapter(
  "aider",
  placeholder("aider", "aider", ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"]),
);
registerAdapter("qwen", placeholder("qwen", "qwen", ["DASHSCOPE_API_KEY", "OPENAI_API_KEY"]));
registerAdapter("generic", (settings) => {
  const command = settings.cli_command ?? [];
  return {
    name: "generic",
    binary: command[0] ?? "",
    apiKeyEnv: [],
    buildArgv(input) {
      const argv = command.slice(1);
      if (input.model && settings.model_flag) argv.push(settings.model_flag, input.model);
      if (settings.prompt_flag) argv.push(settings.prompt_flag, input.prompt);
      else argv.push(input.prompt);
      return argv;
    },
  };
});
