/**
 * Google Gemini CLI (`npm i -g @google/gemini-cli`). Flags read from `gemini --help` of 0.61.0
 * and checked by running it against tests/fakes/gemini_api.ts: `-p/--prompt` runs headless,
 * `--approval-mode yolo` auto-approves all tools, `--output-format stream-json`, `-m/--model`,
 * `--skip-trust` trusts the worktree for the session (without it a headless run in an untrusted
 * folder exits 55). It has no effort flag and no runtime MCP configuration flag. The prompt is
 * passed as `--prompt=<text>` so a prompt that starts with `-` stays a value.
 *
 * Auth, as 0.61 selects it headless: the `security.auth.selectedType` of its settings, else a
 * guess from the environment in which `GOOGLE_GEMINI_BASE_URL` means the `gateway` type, which
 * headless validation refuses (exit 41, "Invalid auth method selected."). So with an endpoint
 * variable set, the adapter gives Gemini its own settings home (`GEMINI_CLI_HOME`, under
 * `.sdd/runtime/`) holding the user's `~/.gemini/settings.json` with API-key auth selected.
 * API-key auth reads `GEMINI_API_KEY` only; a `GOOGLE_API_KEY` is passed on under that name.
 */
import { join } from "node:path";
import type { AdapterInput, AgentAdapter, HeadlessSetup } from "./types.ts";
import { routeModel } from "./_model.ts";
import { endpointProblem } from "./_url.ts";
import { parseGeminiLog } from "./gemini_log.ts";

/** The auth type Gemini CLI calls API-key auth. */
const GEMINI_API_KEY_AUTH = "gemini-api-key";

const truthy = (v: string | undefined) => v === "true";

/** True when the environment selects Vertex AI or Google login rather than an API key. */
function otherAuth(env: Readonly<Record<string, string>>): boolean {
  return truthy(env.GOOGLE_GENAI_USE_VERTEXAI) || truthy(env.GOOGLE_GENAI_USE_GCA);
}

/** Settings home and key mapping for a headless Gemini under `env`. Pure. */
export function geminiHeadless(
  env: Readonly<Record<string, string>>,
  stateDir: string,
): HeadlessSetup {
  const out: Record<string, string> = { ...env };
  if (otherAuth(env)) return { env: out, args: [], files: [] };
  if (!env.GEMINI_API_KEY && env.GOOGLE_API_KEY) out.GEMINI_API_KEY = env.GOOGLE_API_KEY;
  if (!env.GOOGLE_GEMINI_BASE_URL) return { env: out, args: [], files: [] };
  const home = join(stateDir, "home");
  out.GEMINI_CLI_HOME = home;
  const userHome = env.GEMINI_CLI_HOME || env.HOME;
  return {
    env: out,
    args: [],
    files: [{
      path: join(home, ".gemini", "settings.json"),
      json: { security: { auth: { selectedType: GEMINI_API_KEY_AUTH } } },
      mergeOver: userHome ? join(userHome, ".gemini", "settings.json") : undefined,
    }],
  };
}

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
    "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GEMINI_CLI_HOME",
  ],
  // Gemini 0.61's own alias of its cheapest model (gemini-3.5-flash-lite), so it follows the CLI.
  cheapestModel: "flash-lite",
  container: {
    needs: { node: "nodejs", npm: "npm" },
    install: ["npm install -g @google/gemini-cli@0.61.0"],
    endpoints: [{
      env: "GOOGLE_GEMINI_BASE_URL",
      default: "https://generativelanguage.googleapis.com",
    }],
  },
  acceptsMcpConfig: false,
  supportsEffort: false,
  buildArgv(input: AdapterInput): string[] {
    const argv = ["--approval-mode", "yolo", "--skip-trust", "--output-format", "stream-json"];
    const model = routeModel(input, geminiAdapter.cheapestModel);
    if (model) argv.push("--model", model);
    argv.push(`--prompt=${input.prompt}`);
    return argv;
  },
  parseLog: parseGeminiLog,
  headless: geminiHeadless,
  headlessProblem(env) {
    const endpoint = endpointProblem(
      env,
      "GOOGLE_GEMINI_BASE_URL",
      "endpoint's base, e.g. http://127.0.0.1:8080",
    );
    if (endpoint) return endpoint;
    if (truthy(env.GOOGLE_GENAI_USE_VERTEXAI)) {
      const project = env.GOOGLE_CLOUD_PROJECT && env.GOOGLE_CLOUD_LOCATION;
      if (project || env.GOOGLE_API_KEY) return undefined;
      return {
        problem: "Vertex AI auth (GOOGLE_GENAI_USE_VERTEXAI=true) has no project and no key",
        fix: "export GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, or GOOGLE_API_KEY",
      };
    }
    if (truthy(env.GOOGLE_GENAI_USE_GCA) || env.GEMINI_API_KEY || env.GOOGLE_API_KEY) {
      return undefined;
    }
    return {
      problem: "Gemini's API-key auth has no key",
      fix: "export GEMINI_API_KEY=… (or GOOGLE_GENAI_USE_VERTEXAI=true with a project)",
    };
  },
};
