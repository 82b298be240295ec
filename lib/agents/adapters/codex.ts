/**
 * OpenAI Codex CLI (`npm i -g @openai/codex`). Flags read from `codex exec --help` of
 * codex-cli 0.169.0 and checked by running it against tests/fakes/openai_responses_api.ts:
 * `exec` runs non-interactively (no approval prompts), `--json` prints JSONL events,
 * `--sandbox workspace-write` lets it edit the worktree, `--skip-git-repo-check`, `-C/--cd <DIR>`,
 * `-m/--model`, and `-c key=value` config overrides (TOML values).
 *
 * What a headless run needs, found by running 0.169:
 * - the `workspace-write` sandbox has its own network namespace, so the report to the task
 *   server fails unless `sandbox_workspace_write.network_access=true`; `.git` stays read-only in
 *   it, so the agent cannot commit (the service commits what it leaves);
 * - `codex exec` authenticates with `CODEX_API_KEY` (or a `codex login`); `OPENAI_API_KEY` alone
 *   sends no key, so the adapter passes it on as `CODEX_API_KEY`;
 * - `OPENAI_BASE_URL` is ignored: a gateway is reached with `-c openai_base_url=<url>`;
 * - the JSONL names no model: the model and per-model usage come from Codex's own session record
 *   (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl`, `turn_context` and
 *   `token_usage_record` lines).
 * Codex has no runtime MCP configuration file flag (its MCP servers live in config.toml).
 */
import { join } from "node:path";
import type { AdapterInput, AgentAdapter, HeadlessSetup } from "./types.ts";
import { routeModel } from "./_model.ts";
import { endpointProblem } from "./_url.ts";
import { parseCodexLog, parseCodexSessionRecord } from "./codex_log.ts";

/** The cheapest model of Codex 0.169's catalogue (`codex debug models`), for `complexity: low`. */
const CODEX_CHEAPEST_MODEL = "gpt-6-luna";

/** The `-c` overrides every headless run gets (the report must reach the task server). */
const CODEX_SANDBOX_OVERRIDES = ["-c", "sandbox_workspace_write.network_access=true"];

/** `-c` overrides and key mapping for a headless Codex under `env`. Pure. */
export function codexHeadless(env: Readonly<Record<string, string>>): HeadlessSetup {
  const out: Record<string, string> = { ...env };
  if (!env.CODEX_API_KEY && env.OPENAI_API_KEY) out.CODEX_API_KEY = env.OPENAI_API_KEY;
  const args: string[] = [];
  if (env.OPENAI_BASE_URL) {
    args.push("-c", `openai_base_url=${JSON.stringify(env.OPENAI_BASE_URL)}`);
  }
  return { env: out, args, files: [] };
}

/** The Codex adapter. */
export const codexAdapter: AgentAdapter = {
  name: "codex",
  binary: "codex",
  apiKeyEnv: ["OPENAI_API_KEY", "CODEX_API_KEY"],
  passEnv: ["OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"],
  cheapestModel: CODEX_CHEAPEST_MODEL,
  container: {
    needs: { node: "nodejs", npm: "npm" },
    install: ["npm install -g @openai/codex@0.169.0"],
    endpoints: [{ env: "OPENAI_BASE_URL", default: "https://api.openai.com" }],
  },
  acceptsMcpConfig: false,
  supportsEffort: true,
  buildArgv(input: AdapterInput): string[] {
    const argv = [
      "exec",
      "--json",
      "--sandbox",
      "workspace-write",
      ...CODEX_SANDBOX_OVERRIDES,
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
  parseLog: parseCodexLog,
  parseSessionRecord: parseCodexSessionRecord,
  headless: (env) => codexHeadless(env),
  sessionRecord(events, env) {
    const thread = events.find((e) => e.kind === "session")?.id;
    if (!thread) return undefined;
    const home = env.CODEX_HOME || (env.HOME ? join(env.HOME, ".codex") : undefined);
    return home ? { dir: join(home, "sessions"), suffix: `-${thread}.jsonl` } : undefined;
  },
  headlessProblem(env) {
    return endpointProblem(env, "OPENAI_BASE_URL", "gateway's base, e.g. http://127.0.0.1:8080/v1");
  },
};
