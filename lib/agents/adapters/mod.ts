/**
 * The adapter set: the built-in adapters and the registration call for third-party ones (spec
 * §7.3: "third-party adapters register through an adapters entry point").
 *
 * A third-party module, named in service.yaml by `adapters.<name>.module` (modules.ts imports it),
 * registers its adapter at import time, or default-exports it:
 *
 * ```ts
 * import { registerAdapter } from "./lib/agents/adapters/mod.ts";
 * registerAdapter({ name: "my-cli", binary: "my-cli", apiKeyEnv: ["MY_KEY"], passEnv: [],
 *   acceptsMcpConfig: false, supportsEffort: false,
 *   buildArgv: (i) => ["--headless", i.prompt] });
 * ```
 *
 * Without `parseLog` its session log is read as a generic command's (every built-in format is
 * recognised); `parseUsage` reads usage a format of its own states.
 */
import type { AgentAdapter } from "./types.ts";
import { claudeAdapter } from "./claude.ts";
import { codexAdapter } from "./codex.ts";
import { geminiAdapter } from "./gemini.ts";
import { aiderAdapter } from "./aider.ts";
import { qwenAdapter } from "./qwen.ts";
import { genericAdapter, type GenericAdapterOptions, parseAnyLog } from "./generic.ts";
import { ValueError } from "../errors.ts";
import { suggest } from "../../util/levenshtein.ts";
import type { LogParser } from "../session_events.ts";

export type { AdapterInput, AgentAdapter } from "./types.ts";
export type { ModelUsage, UsageReport } from "../../cost/report.ts";
export { genericAdapter, type GenericAdapterOptions } from "./generic.ts";

/** The adapters that ship with the service (`generic` is built per config by `genericAdapter`). */
export const BUILTIN_ADAPTERS: readonly AgentAdapter[] = [
  claudeAdapter,
  codexAdapter,
  geminiAdapter,
  aiderAdapter,
  qwenAdapter,
];

const registered = new Map<string, AgentAdapter>();

/** What is wrong with `value` as an adapter, or undefined when it is one. */
export function adapterProblem(value: unknown): string | undefined {
  if (!value || typeof value !== "object") return "not an object";
  const a = value as Partial<AgentAdapter>;
  if (typeof a.name !== "string" || !/^[a-z][a-z0-9_-]*$/.test(a.name)) {
    return "name must be lower-case letters, digits, _ and - (the value of `cli:`)";
  }
  if (typeof a.binary !== "string" || a.binary === "") return "binary (the executable) is missing";
  for (const key of ["apiKeyEnv", "passEnv"] as const) {
    if (!Array.isArray(a[key]) || a[key].some((v) => typeof v !== "string")) {
      return `${key} must be a list of variable names`;
    }
  }
  for (const key of ["acceptsMcpConfig", "supportsEffort"] as const) {
    if (typeof a[key] !== "boolean") return `${key} must be true or false`;
  }
  if (typeof a.buildArgv !== "function") return "buildArgv(input) is missing";
  for (const key of ["parseLog", "parseUsage"] as const) {
    if (a[key] !== undefined && typeof a[key] !== "function") return `${key} must be a function`;
  }
  return undefined;
}

/**
 * Register a third-party adapter under `adapter.name`. Throws `ValueError` when the name is
 * taken (built-in names and `generic` included) or when the object is not an adapter.
 */
export function registerAdapter(adapter: AgentAdapter): void {
  const problem = adapterProblem(adapter);
  if (problem) throw new ValueError(`cannot register adapter: ${problem}`);
  if (adapter.name === "generic" || BUILTIN_ADAPTERS.some((a) => a.name === adapter.name)) {
    throw new ValueError(`Adapter '${adapter.name}' is built in and cannot be replaced`);
  }
  if (registered.has(adapter.name)) {
    throw new ValueError(`Adapter '${adapter.name}' is already registered`);
  }
  registered.set(adapter.name, adapter);
}

/** Whether an adapter named `name` is registered by a third party. */
export function isRegistered(name: string): boolean {
  return registered.has(name);
}

// Modules written for a bundled service cannot import this file: they find it here instead.
(globalThis as Record<symbol, unknown>)[Symbol.for("service.registerAdapter")] = registerAdapter;

/** How `adapter` reads its session log: its own `parseLog`, else the generic reading. */
export function logParserOf(adapter: AgentAdapter): LogParser {
  return adapter.parseLog ? (text) => adapter.parseLog!(text) : parseAnyLog;
}

/**
 * How the adapter named `name` reads its session log; a name no adapter has (a generic command,
 * whatever it is called) reads it the generic way.
 */
export function logParserFor(name: string | undefined): LogParser {
  const adapter = BUILTIN_ADAPTERS.find((a) => a.name === name) ??
    (name === undefined ? undefined : registered.get(name));
  return adapter ? logParserOf(adapter) : parseAnyLog;
}

/** Names of every adapter `adapterByName` accepts, sorted. */
export function availableAdapters(): string[] {
  return [...BUILTIN_ADAPTERS.map((a) => a.name), "generic", ...registered.keys()].sort();
}

/**
 * The adapter named by `cli:`. `generic` needs its options (`cli_command` …). Throws
 * `ValueError: Unknown adapter '<x>'. Available adapters: a, b, …` for an unknown name.
 */
export function adapterByName(name: string, generic?: GenericAdapterOptions): AgentAdapter {
  if (name === "generic") {
    if (!generic) {
      throw new ValueError(
        "generic adapter needs cli_command",
        "set cli_command (and optionally prompt_flag, model_flag) in service.yaml",
      );
    }
    return genericAdapter(generic);
  }
  const found = BUILTIN_ADAPTERS.find((a) => a.name === name) ?? registered.get(name);
  if (found) return found;
  const guess = suggest(name, availableAdapters());
  throw new ValueError(
    `Unknown adapter '${name}'. Available adapters: ${availableAdapters().join(", ")}` +
      (guess ? ` (did you mean '${guess}'?)` : ""),
    (guess
      ? `set cli: ${guess} in service.yaml, `
      : "set cli: to one of the available adapters, ") +
      `or name a module that registers it with adapters.${name}.module in service.yaml`,
  );
}
