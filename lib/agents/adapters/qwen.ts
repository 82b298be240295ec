/**
 * Qwen Code (`npm i -g @qwen-code/qwen-code`). Flags read from `qwen --help` of 0.15.10: the
 * positional prompt runs one-shot (`-p` is deprecated), `--approval-mode yolo`,
 * `--output-format stream-json` (Claude Code's format, without a cost), `-m/--model`,
 * `--mcp-config <path or JSON>`. No effort flag. It speaks the OpenAI-compatible API, configured
 * by `OPENAI_API_KEY`, `OPENAI_BASE_URL` and `OPENAI_MODEL`.
 */
import type { AdapterInput, AgentAdapter } from "./types.ts";
import { routeModel } from "./_model.ts";
import type { SessionEvent } from "../session_events.ts";
import { parseLogWith } from "./_log.ts";
import { claudeFormat } from "./claude_log.ts";

/** Qwen Code's stream-json is Claude Code's; usage without an init line is priced as `qwen`. */
const QWEN = [claudeFormat("qwen")];

/** The Qwen Code adapter. */
export const qwenAdapter: AgentAdapter = {
  name: "qwen",
  binary: "qwen",
  apiKeyEnv: ["OPENAI_API_KEY"],
  passEnv: ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "QWEN_HOME"],
  cheapestModel: "qwen3-coder-flash",
  container: {
    needs: { node: "nodejs", npm: "npm" },
    install: ["npm install -g @qwen-code/qwen-code"],
    endpoints: [{ env: "OPENAI_BASE_URL" }],
  },
  acceptsMcpConfig: true,
  supportsEffort: false,
  buildArgv(input: AdapterInput): string[] {
    const argv = ["--approval-mode", "yolo", "--output-format", "stream-json"];
    const model = routeModel(input, qwenAdapter.cheapestModel);
    if (model) argv.push("--model", model);
    if (input.mcpConfigPath) argv.push("--mcp-config", input.mcpConfigPath);
    argv.push("--", input.prompt);
    return argv;
  },
  parseLog(logText: string): SessionEvent[] {
    return parseLogWith(QWEN, logText);
  },
};
