/**
 * Google Gemini CLI (`npm i -g @google/gemini-cli`). Flags read from `gemini --help` of 0.61.0:
 * `-p/--prompt` runs headless, `--approval-mode yolo` auto-approves all tools,
 * `--output-format stream-json`, `-m/--model`, `--skip-trust` trusts the worktree for the
 * session. It has no effort flag and no runtime MCP configuration flag. The prompt is passed as
 * `--prompt=<text>` so a prompt that starts with `-` stays a value.
 */
import type { AdapterInput, AgentAdapter } from "./types.ts";
import { routeModel } from "./_model.ts";
import { parseGeminiJson } from "../usage.ts";

/** The Gemini CLI adapter. */
export const geminiAdapter: AgentAdapter = {
  name: "gemini",
  binary: "gemini",
  apiKeyEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  passEnv: [
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
  ],
  cheapestModel: "gemini-2.5-flash-lite",
  acceptsMcpConfig: false,
  supportsEffort: false,
  buildArgv(input: AdapterInput): string[] {
    const argv = ["--approval-mode", "yolo", "--skip-trust", "--output-format", "stream-json"];
    const model = routeModel(input, geminiAdapter.cheapestModel);
    if (model) argv.push("--model", model);
    argv.push(`--prompt=${input.prompt}`);
    return argv;
  },
  parseUsage(logText: string) {
    return parseGeminiJson(logText);
  },
};
