/**
 * OpenAI Codex CLI (`npm i -g @openai/codex`). Flags read from `codex exec --help` of
 * codex-cli 0.169.0: `exec` runs non-interactively (no approval prompts), `--json` prints JSONL
 * events, `--sandbox workspace-write` lets it edit the worktree, `--skip-git-repo-check`,
 * `-C/--cd <DIR>`, `-m/--model`, and `-c model_reasoning_effort="<level>"` for effort (a config
 * override; the binary names the key and the levels low, medium, high, xhigh). Codex has no
 * runtime MCP configuration file flag (its MCP servers live in config.toml), so it ignores one.
 */
import type { AdapterInput, AgentAdapter } from "./types.ts";
import { routeModel } from "./_model.ts";
import { parseCodexJson } from "../usage.ts";

/** Model assumed for cost estimates when none is configured (Codex does not log its model). */
export const CODEX_ASSUMED_MODEL = "gpt-5";

/** The Codex adapter. */
export const codexAdapter: AgentAdapter = {
  name: "codex",
  binary: "codex",
  apiKeyEnv: ["OPENAI_API_KEY", "CODEX_API_KEY"],
  passEnv: ["OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"],
  cheapestModel: "gpt-5-mini",
  acceptsMcpConfig: false,
  supportsEffort: true,
  buildArgv(input: AdapterInput): string[] {
    const argv = [
      "exec",
      "--json",
      "--sandbox",
      "workspace-write",
      "--skip-git-repo-check",
      "--cd",
      input.workdir,
    ];
    const model = routeModel(input, codexAdapter.cheapestModel);
    if (model) argv.push("--model", model);
    if (input.effort) argv.push("-c", `model_reasoning_effort=${JSON.stringify(input.effort)}`);
    argv.push("--", input.prompt);
    return argv;
  },
  parseUsage(logText: string) {
    return parseCodexJson(logText, CODEX_ASSUMED_MODEL);
  },
};
