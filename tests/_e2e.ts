/**
 * Shared parts of the end-to-end run tests: a real git workspace with a plan for the scripted
 * agent, the CLI as a child process, the journal read back and checked by the independent
 * Python fold, and the board page in the real browser.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "./_chromium.ts";
import { verifyJournalText } from "../lib/journal/verify.ts";
import { projectJournalAsFolded } from "../lib/board/projection.ts";
import { type RunningServer, startServer } from "../lib/server/serve.ts";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import type { TokenSpec } from "../lib/auth/tokens.ts";

export const AGENT = new URL("../agents/scripted_agent.ts", import.meta.url).pathname;
export const CLI = new URL("../cli.ts", import.meta.url).pathname;
const FOLD_PY = new URL("../scripts/fold.py", import.meta.url).pathname;

/** One plan step for the scripted agent. */
export interface Step {
  id: string;
  role?: string;
  script: unknown[][];
  signals?: Record<string, string>[];
  owned?: string[];
  evidence?: { name: string; command: string; timeout_s?: number }[];
  /** `batch_eligible: true`: the step goes through the batch lane. */
  batch?: boolean;
  /** The adapter the step's agents run (`cli`). */
  cli?: string;
}

/** Run git in `cwd`; throws with its stderr on failure. */
export async function sh(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** A plan whose steps carry their agent scripts in the goal. */
export function planYaml(stages: { name: string; depends?: string[]; steps: Step[] }[]): string {
  const lines = ["name: e2e", "stages:"];
  for (const stage of stages) {
    lines.push(`  - name: ${stage.name}`);
    if (stage.depends) lines.push(`    depends_on: ${JSON.stringify(stage.depends)}`);
    lines.push("    steps:");
    for (const step of stage.steps) {
      lines.push(
        `      - id: ${step.id}`,
        `        role: ${step.role ?? "backend"}`,
        "        goal: |",
      );
      lines.push(`          Task ${step.id}.`, "          ```agent-script");
      for (const d of step.script) lines.push(`          ${JSON.stringify(d)}`);
      lines.push("          ```");
      if (step.signals) lines.push(`        completion_signals: ${JSON.stringify(step.signals)}`);
      if (step.owned) lines.push(`        owned_files: ${JSON.stringify(step.owned)}`);
      if (step.evidence) lines.push(`        evidence: ${JSON.stringify(step.evidence)}`);
      if (step.batch) lines.push("        batch_eligible: true");
      if (step.cli) lines.push(`        cli: ${JSON.stringify(step.cli)}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** A git repository with `service.yaml` (generic adapter, scripted agent) and `plan.yaml`. */
export async function workspace(
  dir: string,
  stages: Parameters<typeof planYaml>[0],
  extraConfig = "",
  files: Record<string, string> = {},
): Promise<void> {
  await sh(dir, "init", "-q", "-b", "main");
  await sh(dir, "config", "user.email", "e2e@localhost");
  await sh(dir, "config", "user.name", "e2e");
  await Deno.writeTextFile(join(dir, "README.md"), "# e2e\n");
  for (const [path, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, path), text);
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `cli: generic\ncli_command: ${
      JSON.stringify(["deno", "run", "-A", AGENT])
    }\nroles:\n  backend: {}\n  docs: {}\n${extraConfig}`,
  );
  await Deno.writeTextFile(join(dir, "plan.yaml"), planYaml(stages));
  await sh(dir, "add", "-A");
  await sh(dir, "commit", "-q", "-m", "init");
}

/**
 * A run's journal, verified, after checking that `scripts/fold.py` (an independent fold)
 * computes the projection the server computes from the same bytes.
 */
export async function journalOf(dir: string, runId: string) {
  const text = await Deno.readTextFile(join(dir, ".sdd/runs", runId, "journal.jsonl"));
  await foldAgrees(text, runId);
  return verifyJournalText(text);
}

/** The journal's rows (verified first; no fold check, cheap enough to poll). */
export async function rowsOf(dir: string, runId: string) {
  const journal = verifyJournalText(
    await Deno.readTextFile(join(dir, ".sdd/runs", runId, "journal.jsonl")),
  );
  assert.equal(journal.verified, true, "the run's journal verifies");
  return journal.rows.map((r) => r.row);
}

// Both folds read one snapshot of the bytes, so a run still appending cannot make them differ.
async function foldAgrees(text: string, runId: string) {
  const snapshot = await Deno.makeTempFile({ suffix: ".jsonl" });
  try {
    await Deno.writeTextFile(snapshot, text);
    const out = await new Deno.Command("python3", { args: [FOLD_PY, snapshot] }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const python = JSON.parse(new TextDecoder().decode(out.stdout));
    const receipt = await projectJournalAsFolded(runId, snapshot);
    assert.equal(receipt.projection_hash, python.projection_hash, "fold.py agrees with the server");
    assert.equal(receipt.journal_head, python.journal_head);
    assert.equal(receipt.journal_verified, python.journal_verified);
    return receipt;
  } finally {
    await Deno.remove(snapshot);
  }
}

/** The server's projection of a run, checked against `scripts/fold.py` on the same bytes. */
export async function projectionAgreed(dir: string, runId: string) {
  const text = await Deno.readTextFile(join(dir, ".sdd/runs", runId, "journal.jsonl"));
  const receipt = await foldAgrees(text, runId);
  assert.equal(receipt.journal_verified, true, "the run's journal verifies");
  return receipt;
}

/** Task ids per board column. */
export function columnsOf(
  receipt: { board: { columns: Record<string, { task_id: string }[]> } },
): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(receipt.board.columns).map(([k, cards]) => [k, cards.map((c) => c.task_id)]),
  );
}

/** The CLI as a child process in `root`; resolves with its exit code and output. */
export async function cli(root: string, ...args: string[]) {
  return await cliAs(undefined, root, ...args);
}

/**
 * The CLI with `SERVICE_TOKEN` set for it alone. Never set it in this process's environment:
 * test files run in parallel in one process, and a loopback server of another file would then
 * ask every request of its own for that token (401).
 */
export async function cliAs(token: string | undefined, root: string, ...args: string[]) {
  return await cliWith(token ? { SERVICE_TOKEN: token } : {}, root, ...args);
}

/** The CLI with `env` added to its own environment (not this process's: see {@link withEnv}). */
export async function cliWith(env: Record<string, string>, root: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, out: text };
}

/**
 * This process's environment plus `vars`, for one run (`runPlan({ env: runEnv({…}) })`): how a
 * test shortens `SERVICE_AGENT_TIMEOUT_S`, points at a kubeconfig or a fake runtime, without
 * changing what every other test module of the process reads.
 */
export function runEnv(vars: Record<string, string>): Record<string, string> {
  return { ...Deno.env.toObject(), ...vars };
}

/**
 * Set environment variables until disposed — in the one environment every test module of the
 * process shares (`deno test --parallel` runs them on threads of one process). Only for names
 * that belong to the calling test alone (a token variable its own service.yaml names); never a
 * variable the service, git, a container runtime or an agent reads (tests/process_env_test.ts
 * checks): use {@link runEnv} or {@link cliWith} for those.
 */
export function withEnv(vars: Record<string, string>): Disposable {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
  return {
    [Symbol.dispose]() {
      for (const [k, v] of Object.entries(before)) {
        v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
      }
    },
  };
}

/** Headless Chromium with one page; closed on dispose. */
export async function browserPage(): Promise<AsyncDisposable & { page: Page }> {
  const browser: Browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  return {
    page,
    async [Symbol.asyncDispose]() {
      await browser.close();
    },
  };
}

/** Open the board of `runId` on `base` and wait until its columns are drawn. */
export async function openRunPage(page: Page, base: string, runId: string, task?: string) {
  const query = new URLSearchParams({ run: runId });
  if (task) query.set("task", task);
  await page.goto(`${base}/dashboard/review-board?${query}`);
  await page.locator(".columns").waitFor({ timeout: 20_000 });
}

/** Task ids in one column of the page, as drawn. */
export function pageColumn(page: Page, column: string): Promise<string[]> {
  return page.locator(`[data-column=${column}] [data-task-id]`).evaluateAll((els) =>
    els.map((e) => e.getAttribute("data-task-id")!)
  );
}

/** Poll `check` until it is true (or fail with `what` after `ms`). */
export async function until(what: string, check: () => Promise<boolean>, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The server (board and task API) over `root` on a free loopback port with `tokens`. */
export function loopbackServer(root: string, tokens: TokenSpec[] = []): Promise<RunningServer> {
  return startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens,
    announce: false,
    app: SERVER_APP,
  });
}

/** {@link loopbackServer}, shut down on dispose. */
export async function serveBoard(
  root: string,
  tokens: TokenSpec[] = [],
): Promise<AsyncDisposable & { url: string }> {
  const server = await loopbackServer(root, tokens);
  return {
    url: server.url,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** The line a run prints with its board's URL and run id. */
const BOARD_LINE =
  /review board \(live while the run lasts\): (http:\/\/[^/]+)\/dashboard\/review-board\?run=(\S+)/;

/**
 * `root`'s plan run in this process on a free port with the real server, watched as a user
 * watches it: its terminal lines, and the board's URL and run id once the run announced them.
 */
export function watchedRun(root: string) {
  const run = { url: "", runId: "", lines: [] as string[] };
  const result = runPlan({
    root,
    port: 0,
    app: SERVER_APP,
    out: (line) => {
      run.lines.push(line);
      const m = BOARD_LINE.exec(line);
      if (m) [run.url, run.runId] = [m[1], m[2]];
    },
  });
  return Object.assign(run, { result });
}
