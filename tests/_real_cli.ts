/**
 * Shared set-up of the real-CLI service tests: a workspace whose `service.yaml` names a real
 * adapter, a one-step plan, and the shell command a scripted provider stand-in makes the CLI
 * run (write a file, then report completion to the task server as the role prompt says).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, journalOf, sh } from "./_e2e.ts";
import { runDeno } from "./helpers.ts";
import { resolveBinary } from "../lib/agents/preflight.ts";

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
  /** How the run ended (its `run_completed` status) and the service's terminal output. */
  status: string;
  output: string;
  /** The run's journal rows (verified, fold-checked). */
  rows: JournalRow[];
}

type JournalRow = Awaited<ReturnType<typeof journalOf>>["rows"][number]["row"];

/** `p`, or a rejection after `ms` (the run's agents have their own 2-minute timeout). */
function deadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`service run took over ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * `service run` of the one-step plan in its own process, as a user runs it, with a fresh HOME
 * (and `CODEX_HOME`) and `env`. Its environment is built here, not inherited from this process,
 * whose variables other test files running in parallel may change (SERVICE_AGENT_TIMEOUT_S …).
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
  const run = runDeno(["run", "-A", CLI, "--root", dir, "run", "--port", "0"], {
    clearEnv: true,
    env: {
      LANG: "C.UTF-8",
      // The agent's HOME is fresh; Deno's own cache stays where it is.
      DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache/deno"),
      HOME: home,
      CODEX_HOME: home,
      ...env,
    },
  });
  const { text: output } = await deadline(run, 300_000);
  const runs = await Array.fromAsync(Deno.readDir(join(dir, ".sdd/runs")));
  assert.equal(runs.length, 1, `one run:\n${output}`);
  const rows = (await journalOf(dir, runs[0].name)).rows.map((r) => r.row);
  const status = String(rows.findLast((r) => r.type === "run_completed")?.data.status);
  return {
    dir,
    status,
    output,
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
  assert.equal(run.status, "completed", run.output);
  assert.equal(await Deno.readTextFile(join(run.dir, file)), `${text}\n`);
  const completed = run.rows.find((r) => r.type === "task_completed");
  assert.ok(completed, "the task was reported");
  assert.equal(completed.data.recovered, undefined, "the agent reported itself over HTTP");
  assert.equal(completed.data.summary, `wrote ${file}`);
  assert.ok(run.rows.some((r) => r.type === "task_merged"), "its work landed");
}

/** The run failed after exactly one agent exit, for a reason matching `reason`. */
export function assertFailedOnce(run: RealRun, reason: RegExp) {
  assert.equal(run.status, "failed", run.output);
  const exits = run.rows.filter((r) => r.type === "agent_exited");
  const said = run.rows.filter((r) => r.type === "task_retried" || r.type === "task_failed")
    .map((r) => `${r.type}: ${r.data.reason}`);
  assert.equal(exits.length, 1, `not retried; the journal says:\n${said.join("\n")}`);
  const failed = run.rows.find((r) => r.type === "task_failed");
  assert.match(String(failed?.data.reason), reason);
  assert.match(String(failed?.data.reason), /\(not retried: it would fail the same way\)$/);
}
