/**
 * The adapter contract: how the service turns a task into the argv of one agent CLI and reads
 * back what that CLI said (its session log, as events). Adapters are plain data plus pure
 * functions.
 */
import type { UsageReport } from "../../cost/report.ts";
import type { SessionEvent, UsageEvent } from "../session_events.ts";

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

/** A file a headless launch needs, written (mode 0600) before the agent starts. */
export interface LaunchFile {
  /** Absolute path. */
  path: string;
  /** JSON content. */
  json: Record<string, unknown>;
  /** A JSON file of the user's whose content is kept under `json` (deep-merged), if readable. */
  mergeOver?: string;
}

/** What one headless launch needs besides the argv: variables, leading arguments, files. */
export interface HeadlessSetup {
  /** The agent's environment with the adapter's additions (never a variable removed). */
  env: Record<string, string>;
  /** Arguments placed before the argv of `buildArgv` (global options of the CLI). */
  args: string[];
  files: LaunchFile[];
}

/** Why a headless start would fail, and what to do. */
export interface HeadlessProblem {
  problem: string;
  fix: string;
}

/** Where a CLI keeps its own record of a session, found from the session's log. */
export interface SessionRecordLocation {
  /** Directory searched (recursively, newest first) for the record. */
  dir: string;
  /** The record's file name ends with this. */
  suffix: string;
}

/** What container isolation needs of a CLI (docs/isolation.md). */
export interface AdapterContainer {
  /** Commands its installation needs first, and the Debian packages that give them. */
  needs: Readonly<Record<string, string>>;
  /** Shell commands of the generated Containerfile that install it. */
  install: readonly string[];
  /** Its model endpoints: the variable that overrides one, and the default URL. */
  endpoints: readonly { env: string; default?: string }[];
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
  /**
   * How the generated agent image installs the CLI and which model endpoints the restricted
   * network lets it reach (`isolation: container`); absent: `container.install` and
   * `container.allow_hosts` say it (the generic adapter).
   */
  container?: AdapterContainer;
  /** True when the CLI takes a runtime MCP configuration file. */
  acceptsMcpConfig: boolean;
  /** Variables set for the CLI when it is given a runtime MCP configuration (docs/mcp.md). */
  mcpEnv?: Readonly<Record<string, string>>;
  /** True when the CLI takes an effort / reasoning level. */
  supportsEffort: boolean;
  /**
   * True when the CLI reads Claude Code project skills (`.claude/skills/<name>/SKILL.md`): the
   * service writes its own there before the agent starts (lib/agents/skills.ts).
   */
  claudeSkills?: boolean;
  /** The argv after the binary for one non-interactive, headless run. */
  buildArgv(input: AdapterInput): string[];
  /**
   * The session log as events (../session_events.ts): the one place this CLI's output format is
   * known; usage, test runs, rate limits and exit diagnosis read the events. Absent: the generic
   * reading, which knows every built-in format (`parseAnyLog` of ./generic.ts).
   */
  parseLog?(logText: string): SessionEvent[];
  /**
   * A third-party adapter's own usage reader, for a CLI whose usage its events do not state: the
   * usage of a finished run from its log (and the record `sessionRecord` found); it wins.
   */
  parseUsage?(logText: string, sessionRecord?: string): UsageReport | undefined;
  /**
   * What a headless start needs beyond the argv, from the agent's environment (pure). `stateDir`
   * is a private directory of the adapter under `.sdd/runtime/` for files it must write.
   */
  headless?(env: Readonly<Record<string, string>>, stateDir: string): HeadlessSetup;
  /** Where the CLI recorded the session whose log reads `events` (pure), when it keeps one. */
  sessionRecord?(
    events: readonly SessionEvent[],
    env: Readonly<Record<string, string>>,
  ): SessionRecordLocation | undefined;
  /** The usage the CLI's own record of a session states (see `sessionRecord`). Pure. */
  parseSessionRecord?(recordText: string): UsageEvent | undefined;
  /**
   * Why a headless start would fail under `env` although a key is set (auth selection, endpoint,
   * trust), with the fix; undefined when nothing is known to be wrong. Pure.
   */
  headlessProblem?(env: Readonly<Record<string, string>>): HeadlessProblem | undefined;
}
