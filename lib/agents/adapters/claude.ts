/**
 * Claude Code (`npm i -g @anthropic-ai/claude-code`). Flags read from `claude --help` of version
 * 2.1.197: `-p/--print`, `--output-format stream-json` (needs `--verbose` with `-p`), `--model`,
 * `--effort <low|medium|high|xhigh|max>`, `--permission-mode acceptEdits`, `--allowedTools`,
 * `--mcp-config <configs...>`. `--dangerously-skip-permissions` is refused when running as root,
 * so edits are accepted by permission mode and the shell and edit tools are allowed by name,
 * which works headless for root and non-root alike. The prompt follows `--` so a prompt that
 * starts with `-` is never read as a flag and the variadic `--mcp-config` cannot swallow it.
 */
import type { AdapterInput, AgentAdapter } from "./types.ts";
import { routeModel } from "./_model.ts";
import { parseClaudeLog } from "./claude_log.ts";

/** Tools allowed without a prompt in headless runs. */
const CLAUDE_ALLOWED_TOOLS = [
  "Bash",
  "Edit",
  "MultiEdit",
  "Write",
  "Read",
  "Glob",
  "Grep",
  "NotebookEdit",
  "TodoWrite",
];

/** The Claude Code adapter. */
export const claudeAdapter: AgentAdapter = {
  name: "claude",
  binary: "claude",
  apiKeyEnv: ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
  passEnv: [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_MAX_RETRIES",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_TELEMETRY",
  ],
  gatewayKeyEnv: { ANTHROPIC_BASE_URL: ["ANTHROPIC_AUTH_TOKEN"] },
  cheapestModel: "haiku",
  container: {
    needs: { node: "nodejs", npm: "npm" },
    install: ["npm install -g @anthropic-ai/claude-code@2.1.197"],
    endpoints: [{ env: "ANTHROPIC_BASE_URL", default: "https://api.anthropic.com" }],
  },
  acceptsMcpConfig: true,
  // Claude Code -p connects MCP servers in the background unless told to wait: without this the
  // first turn can start before the servers' tools exist.
  mcpEnv: { MCP_CONNECTION_NONBLOCKING: "false" },
  supportsEffort: true,
  // Claude Code reads .claude/skills/: the service's skill says how to report, fail and heartbeat.
  claudeSkills: true,
  buildArgv(input: AdapterInput): string[] {
    const argv = [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "acceptEdits",
      "--allowedTools",
      CLAUDE_ALLOWED_TOOLS.join(","),
    ];
    const model = routeModel(input, claudeAdapter.cheapestModel);
    if (model) argv.push("--model", model);
    if (input.effort) argv.push("--effort", input.effort);
    if (input.mcpConfigPath) argv.push("--mcp-config", input.mcpConfigPath);
    argv.push("--", input.prompt);
    return argv;
  },
  parseLog: parseClaudeLog,
};
