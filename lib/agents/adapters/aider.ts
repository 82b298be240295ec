/**
 * Aider (a Python tool: `python -m pip install aider-install && aider-install`; not on npm).
 * Flags from its documented options (https://aider.chat/docs/config/options.html), not from a
 * local `--help`: `--message <text>` runs one message and exits, `--yes-always`,
 * `--no-auto-commits` (the service commits the worktree itself), `--model`, `--no-pretty`,
 * `--no-stream`, `--no-check-update`, `--no-show-model-warnings`, `--reasoning-effort`.
 * It talks to many providers; any one of their keys is enough. Usage is read from its
 * `Tokens: … Cost: $x message, $y session.` lines.
 */
import type { AdapterInput, AgentAdapter } from "./types.ts";
import { routeModel } from "./_model.ts";
import { parseAiderLog } from "./aider_log.ts";

/** The Aider adapter. */
export const aiderAdapter: AgentAdapter = {
  name: "aider",
  binary: "aider",
  apiKeyEnv: [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
  ],
  passEnv: [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "OPENAI_API_BASE",
    "ANTHROPIC_BASE_URL",
  ],
  cheapestModel: "haiku",
  container: {
    needs: { python3: "python3", pip3: "python3-pip" },
    install: ["python3 -m pip install --break-system-packages aider-install && aider-install"],
    endpoints: [
      { env: "OPENAI_API_BASE", default: "https://api.openai.com" },
      { env: "ANTHROPIC_BASE_URL", default: "https://api.anthropic.com" },
    ],
  },
  acceptsMcpConfig: false,
  supportsEffort: true,
  buildArgv(input: AdapterInput): string[] {
    const argv = [
      "--yes-always",
      "--no-auto-commits",
      "--no-pretty",
      "--no-stream",
      "--no-check-update",
      "--no-show-model-warnings",
    ];
    const model = routeModel(input, aiderAdapter.cheapestModel);
    if (model) argv.push("--model", model);
    if (input.effort) argv.push("--reasoning-effort", input.effort);
    argv.push("--message", input.prompt);
    return argv;
  },
  parseLog: parseAiderLog,
};
