/**
 * The `generic` adapter: any CLI, described by `cli_command` (a string split like a shell would,
 * or a list), optional `prompt_flag` (without it the prompt is the last positional argument) and
 * optional `model_flag` (without it a configured model is not passed).
 */
import type { AdapterInput, AgentAdapter } from "./types.ts";
import { routeModel } from "./_model.ts";
import { splitCommandLine } from "../split_command_line.ts";
import { ValueError } from "../errors.ts";
import type { SessionEvent } from "../session_events.ts";
import { parseLogWith } from "./_log.ts";
import { claudeFormat } from "./claude_log.ts";
import { codexFormat } from "./codex_log.ts";
import { geminiFormat } from "./gemini_log.ts";

/** Every format the service knows; Claude Code's stream-json first (its usage wins). */
const ANY = [claudeFormat(), codexFormat, geminiFormat];

/**
 * The events of a log of unknown make (a generic command, a third-party CLI without its own
 * reading): every built-in format is recognised, and everything else is plain text.
 */
export function parseAnyLog(logText: string): SessionEvent[] {
  return parseLogWith(ANY, logText);
}

/** The `generic` settings of service.yaml. */
export interface GenericAdapterOptions {
  /** `cli_command`: the executable and its fixed arguments. */
  cliCommand: string | string[];
  /** `prompt_flag`, e.g. `--prompt`; absent: the prompt is the last positional argument. */
  promptFlag?: string;
  /** `model_flag`, e.g. `--model`; absent: no model is passed. */
  modelFlag?: string;
  /** Provider key variables of this CLI; any one must be set. Default: none required. */
  apiKeyEnv?: string[];
  /** Extra variables forwarded to this CLI (endpoints and the like). */
  passEnv?: string[];
  /** Adapter name; default `generic`. */
  name?: string;
}

/** Build an adapter for an arbitrary CLI; throws `ValueError` on an empty command. */
export function genericAdapter(options: GenericAdapterOptions): AgentAdapter {
  const words = typeof options.cliCommand === "string"
    ? splitCommandLine(options.cliCommand)
    : [...options.cliCommand];
  if (words.length === 0 || words[0] === "") {
    throw new ValueError(
      "generic adapter needs cli_command",
      'set cli_command in service.yaml, e.g. cli_command: "my-agent --headless"',
    );
  }
  const [binary, ...fixed] = words;
  const apiKeyEnv = options.apiKeyEnv ?? [];
  return {
    name: options.name ?? "generic",
    binary,
    apiKeyEnv,
    passEnv: [...apiKeyEnv, ...(options.passEnv ?? [])],
    acceptsMcpConfig: false,
    supportsEffort: false,
    buildArgv(input: AdapterInput): string[] {
      const argv = [...fixed];
      const model = routeModel(input);
      if (model && options.modelFlag) argv.push(options.modelFlag, model);
      if (options.promptFlag) argv.push(options.promptFlag, input.prompt);
      else argv.push(input.prompt);
      return argv;
    },
    parseLog: parseAnyLog,
  };
}
