/**
 * Shared set-up of the real-CLI service tests: a workspace whose `service.yaml` names a real
 * adapter, a one-step plan, and the shell command a scripted provider stand-in makes the CLI
 * run (write a file, then report completion to the task server as the role prompt says).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { journalOf, sh, withEnv } from "./_e2e.ts";
import { resolveBinary } from "../lib/agents/preflight.ts";
import { runPlan, type RunResult } from "../lib/orchestrator/run.ts";

/** The binary's path, or undefined (with a SKIP line naming the install command). */
export async function realBinary(name: string, pkg: string): Promise<string | undefined> {
  const path = await resolveBinary(name, Deno.env.toObject());
  if (!path) console.warn(`SKIP: \`${name}\` not on PATH (install it with: npm i -g ${pkg})`);
  return path;
}

/** The command that writes `file` and reports completion over HTTP, as an agent would. */
export function writeAndReport(file: string, text: string): string {
  return `printf '%s\\n' '${text}' > ${file} && curl -sS --max-time 20 -X POST ` +
    `"$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/complete" ` +
    `\${SERVICE_TOKEN:+-H "Authorization: Bearer $SERVICE_TOKEN"} ` +
    `-H "Content-Type: application/json" -d '{"summary":"wrote ${file}"}'`;
}

/** A git repository with `service.yaml` (`cli: <adapter>`) and a plan of one step. */
export async function realCliWorkspace(
  dir: string,
  adapter: string,
  file: string,
  extraConfig = "",
): Promise<void> {
  await sh(dir, "init", "-q", "-b", "main");
  await sh(dir, "config", "user.email", "e2e@localhost");
  await sh(dir, "config", "user.name", "e2e");
  await Deno.writeTextFile(join(dir, "README.md"), "# real cli\n");
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `cli: ${adapter}\nroles:\n  backend: { timeout_minutes: 2 }\n${extraConfig}`,
  );
  await Deno.writeTextFile(
    join(dir, "plan.yaml"),
    [
      "name: real-cli",
      "stages:",
      "  - name: one",
      "    steps:",
      "      - id: write",
      "        role: backend",
      `        goal: Write ${file} and report.`,
      `        completion_signals: [{ path_exists: ${file} }]`,
      "",
    ].join("\n"),
  );
  await sh(dir, "add", "-A");
  await sh(dir, "commit", "-q", "-m", "init");
}

/** A run of the plan in a fresh workspace by `adapter`, with `env` set for the service. */
export interface RealRun extends AsyncDisposable {
  dir: string;
  result: RunResult;
  /** The run's journal rows (verified, fold-checked). */
  rows: JournalRow[];
}

type JournalRow = Awaited<ReturnType<typeof journalOf>>["rows"][number]["row"];

/**
 * Run the one-step plan with a real CLI: a fresh workspace and a fresh HOME (`HOME` and, for
 * Codex, `CODEX_HOME`), `env` set in the service's environment for the run only.
 */
export async function realRun(
  adapter: string,
  file: string,
  env: Record<string, string>,
  extraConfig = "",
): Promise<RealRun> {
  const dir = await Deno.makeTempDir({ prefix: "real-cli-" });
  const home = await Deno.makeTempDir({ prefix: "real-cli-home-" });
  await realCliWorkspace(dir, adapter, file, extraConfig);
  let result: RunResult;
  {
    using _env = withEnv({ HOME: home, CODEX_HOME: home, ...env });
    result = await runPlan({ root: dir, out: () => {}, port: 0 });
  }
  const rows = (await journalOf(dir, result.runId)).rows.map((r) => r.row);
  return {
    dir,
    result,
    rows,
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

/** The lines of the workspace's `.sdd/metrics/cost.jsonl`. */
export async function costLines(dir: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(join(dir, ".sdd/metrics/cost.jsonl"));
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

/** The agent wrote `file`, reported it over HTTP itself, and its work landed. */
export async function assertReportedAndLanded(run: RealRun, file: string, text: string) {
  assert.equal(run.result.status, "completed", run.result.problems.join("; "));
  assert.equal(await Deno.readTextFile(join(run.dir, file)), `${text}\n`);
  const completed = run.rows.find((r) => r.type === "task_completed");
  assert.ok(completed, "the task was reported");
  assert.equal(completed.data.recovered, undefined, "the agent reported itself over HTTP");
  assert.equal(completed.data.summary, `wrote ${file}`);
  assert.ok(run.rows.some((r) => r.type === "task_merged"), "its work landed");
}

/** The run failed after exactly one agent exit, for a reason matching `reason`. */
export function assertFailedOnce(run: RealRun, reason: RegExp) {
  assert.equal(run.result.status, "failed", run.result.problems.join("; "));
  const exits = run.rows.filter((r) => r.type === "agent_exited");
  assert.equal(exits.length, 1, "not retried");
  const failed = run.rows.find((r) => r.type === "task_failed");
  assert.match(String(failed?.data.reason), reason);
  assert.match(String(failed?.data.reason), /\(not retried: it would fail the same way\)$/);
}
