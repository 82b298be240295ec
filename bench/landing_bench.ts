/**
 * `deno task bench:landing [--tasks 6] [--mode both|webhooks|polling] [--host github|gitlab]
 * [--ci-ms 2000] [--approve-ms 1000] [--seed 1]`: how soon a pull request lands once what its base requires
 * is there. `service run` runs in its own process over a temporary workspace whose `origin` is the
 * host stand-in's real bare repository (tests/fakes/: GitHub's REST API, or GitLab's; pushes to
 * `main` are refused, only the host's merge moves it). N tasks each write their own file; the
 * base requires one check (`ci/test`, GitLab: the pipeline) and one approving review. The bench
 * plays CI and the reviewer on the stand-in: each new head gets its check green between `--ci-ms`
 * and twice that after the host first sees it, each pull request its approval between
 * `--approve-ms` and twice that after it opens (drawn from `--seed`, so that the moments do not
 * line up with the service's poll interval). Every
 * merge moves `main`, so the later pull requests are rebased and wait for their new head's check.
 * The service's configuration holds no poll interval: its defaults are measured. In `webhooks`
 * mode the stand-in delivers the host's signed webhooks to the run; in `polling` mode none.
 *
 * Printed per mode, from the stand-in's own clock: last requirement → merge requested (the
 * check of the merged head went green or the approval came, whichever was later, to the
 * `PUT …/merge` that merged it; median, p95, max), merge → journal row (the host's merge to the
 * `task_merged` row's `ts`), and API requests per landed pull request (all, 304s, and what the
 * host charged to the rate limit: GitHub charges no 304, GitLab every request). Loopback only;
 * each mode is stopped after 10 minutes and the bench ends by itself.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { FakeHostEvent, HostStats } from "../tests/fakes/_host_http.ts";
import { startFakeGithub } from "../tests/fakes/github_api.ts";
import { startFakeGitlab } from "../tests/fakes/gitlab_api.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;
const AGENT = new URL("../agents/scripted_agent.ts", import.meta.url).pathname;
const SECRET = "bench-hook-secret";
const ROUND_LIMIT_MS = 10 * 60_000;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    tasks: { type: "string", default: "6" },
    seed: { type: "string", default: "1" },
    mode: { type: "string", default: "both" },
    host: { type: "string", default: "github" },
    "ci-ms": { type: "string", default: "2000" },
    "approve-ms": { type: "string", default: "1000" },
  },
});
const TASKS = Math.max(1, Number(values.tasks));
const CI_MS = Number(values["ci-ms"]);
const APPROVE_MS = Number(values["approve-ms"]);
const HOST = values.host === "gitlab" ? "gitlab" : "github";
const MODES = values.mode === "both" ? ["webhooks", "polling"] : [values.mode!];

/** A small seeded generator (mulberry32): the same moments on every run with the same seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout).trim();
}

/** A workspace with `tasks` steps, each writing its own file, committed on `main`. */
async function workspace(root: string, tasks: number): Promise<void> {
  await git(root, "init", "-q", "-b", "main");
  await git(root, "config", "user.email", "bench@localhost");
  await git(root, "config", "user.name", "bench");
  const steps = Array.from({ length: tasks }, (_, i) =>
    [
      `      - id: t${i}`,
      "        role: backend",
      "        goal: |",
      `          Task t${i}.`,
      "          ```agent-script",
      `          ${JSON.stringify(["write", `out/t${i}.txt`, `${i}\n`])}`,
      `          ${JSON.stringify(["report", `wrote out/t${i}.txt`])}`,
      "          ```",
    ].join("\n"));
  await Deno.writeTextFile(
    join(root, "plan.yaml"),
    `name: bench\nstages:\n  - name: s\n    steps:\n${steps.join("\n")}\n`,
  );
  await Deno.writeTextFile(join(root, "README.md"), "# bench\n");
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "init");
}

/** The host stand-in, with CI and a reviewer played on its events. */
async function startHost(root: string) {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (ms: number, f: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      f();
    }, ms);
    timers.add(t);
  };
  const approved = new Set<number>();
  const draw = random(Number(values.seed));
  const ciMs = () => CI_MS * (1 + draw());
  const approveMs = () => APPROVE_MS * (1 + draw());
  if (HOST === "github") {
    // deno-lint-ignore prefer-const
    let fake: Awaited<ReturnType<typeof startFakeGithub>>;
    fake = await startFakeGithub(root, {
      requiredChecks: ["ci/test"],
      approvals: 1,
      strict: true, // every merge moves main: the later pull requests are rebased

      ci: () => [{ name: "ci/test", status: "in_progress" }],
      onEvent: (e) => {
        if (e.kind !== "head") return;
        later(
          ciMs(),
          () =>
            fake.setCheck(e.sha!, { name: "ci/test", status: "completed", conclusion: "success" }),
        );
        if (!approved.has(e.number!)) {
          approved.add(e.number!);
          later(approveMs(), () => void fake.review(e.number!, "alice", "APPROVED"));
        }
      },
    });
    return {
      bare: fake.bare,
      apiUrl: fake.url,
      tracker: "tracker_b",
      events: fake.events,
      stats: (): HostStats => fake.stats(),
      setWebhook: (url: string) => fake.setWebhook({ url, secret: SECRET }),
      async stop() {
        timers.forEach(clearTimeout);
        await fake[Symbol.asyncDispose]();
      },
    };
  }
  // deno-lint-ignore prefer-const
  let fake: Awaited<ReturnType<typeof startFakeGitlab>>;
  fake = await startFakeGitlab(root, {
    pipelineMustSucceed: true,
    approvals: 1,
    mergeMethod: "rebase_merge",
    pipeline: () => "running",
    onEvent: (e) => {
      if (e.kind !== "head") return;
      later(ciMs(), () => fake.setPipeline(e.sha!, "success"));
      if (!approved.has(e.number!)) {
        approved.add(e.number!);
        later(approveMs(), () => fake.approve(e.number!, "alice"));
      }
    },
  });
  return {
    bare: fake.bare,
    apiUrl: fake.url,
    tracker: "tracker_c",
    events: fake.events,
    stats: (): HostStats => fake.stats(),
    setWebhook: (url: string) => fake.setWebhook({ url, secret: SECRET }),
    async stop() {
      timers.forEach(clearTimeout);
      await fake[Symbol.asyncDispose]();
    },
  };
}

/** What one landed pull request took. */
interface Landed {
  number: number;
  /** Last requirement → the merge request that merged it (ms). */
  toMergeRequest: number;
  /** The host's merge → the `task_merged` row (ms). */
  toRow: number;
}

/** Per landed pull request, from the stand-in's events and the run's journal rows. */
function measure(events: FakeHostEvent[], mergedRows: { pr: string; ts: number }[]): Landed[] {
  const out: Landed[] = [];
  for (const merged of events.filter((e) => e.kind === "merged")) {
    const n = merged.number!;
    const sha = merged.sha!;
    const green = events.filter((e) =>
      e.kind === "check" && e.sha === sha && /:success$/.test(e.detail ?? "")
    ).at(-1)?.at;
    const approval = events.find((e) =>
      e.kind === "review" && e.number === n && /approved/i.test(e.detail ?? "")
    )?.at;
    const asked = events.filter((e) =>
      e.kind === "merge_requested" && e.number === n && e.at <= merged.at
    ).at(-1)?.at;
    const row = mergedRows.find((r) => new RegExp(`[/!]${n}$`).test(r.pr));
    if (green === undefined || approval === undefined || asked === undefined || !row) continue;
    out.push({
      number: n,
      toMergeRequest: asked - Math.max(green, approval),
      toRow: row.ts - merged.at,
    });
  }
  return out;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
}

function ms(x: number): string {
  return Number.isFinite(x) ? `${Math.round(x)} ms` : "—";
}

/** One mode: a run of TASKS tasks to the end; its figures. */
async function round(mode: string) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bench-landing-" }));
  await workspace(root, TASKS);
  const host = await startHost(root);
  await git(root, "remote", "add", "origin", host.bare);
  const tokenEnv = "BENCH_LANDING_TOKEN";
  const secretEnv = "BENCH_LANDING_HOOK_SECRET";
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      `roles:\n  backend: {}\nmax_agents: ${TASKS}\n` +
      `landing:\n  mode: pull_request\n  provider: ${HOST}\n  api_url: ${host.apiUrl}\n` +
      `  repo: acme/widget\n  token_env: ${tokenEnv}\n  method: squash\n` +
      (mode === "webhooks"
        ? `trackers:\n  ${host.tracker}:\n    webhook: { enabled: true, secret_env: ${secretEnv} }\n`
        : ""),
  );
  const started = Date.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
    env: {
      NO_COLOR: "1",
      [tokenEnv]: HOST === "github" ? "gh-token" : "glpat-token",
      [secretEnv]: SECRET,
    },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const announced = Promise.withResolvers<string>();
  const read = (async () => {
    let buffered = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      const parts = buffered.split("\n");
      buffered = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        const m = /review board \(live while the run lasts\): (http:\/\/[^/]+)\//.exec(line);
        if (m) announced.resolve(m[1]);
      }
    }
  })();
  const stderr = new Response(child.stderr).text();
  if (mode === "webhooks") {
    const url = await Promise.race([announced.promise, child.status.then(() => "")]);
    if (url) host.setWebhook(`${url}/webhooks/trackers/${host.tracker}`);
  }
  const limit = setTimeout(() => child.kill("SIGTERM"), ROUND_LIMIT_MS);
  const status = await child.status;
  clearTimeout(limit);
  await read;
  const elapsed = Date.now() - started;
  const runId = JSON.parse(
    await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")),
  ).run_id;
  const journal = await Deno.readTextFile(join(root, ".sdd/runs", runId, "journal.jsonl"));
  const rows = journal.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const mergedRows = rows.filter((r) => r.type === "task_merged").map((r) => ({
    pr: String(r.data.pr ?? ""),
    ts: Date.parse(r.ts),
  }));
  const landed = measure(host.events, mergedRows);
  const stats = host.stats();
  await host.stop();
  if (!status.success || landed.length !== TASKS) {
    console.error(`${mode}: run ended with code ${status.code}; ${landed.length}/${TASKS} landed`);
    console.error(lines.slice(-20).join("\n"));
    console.error((await stderr).slice(-2000));
  }
  await Deno.remove(root, { recursive: true }).catch(() => {});
  return { mode, landed, stats, elapsed };
}

// `deno bench` imports every *_bench.ts: the rounds run only when this file is the program.
if (import.meta.main) {
  console.log(
    `landing bench: ${TASKS} tasks on ${HOST === "github" ? "GitHub" : "GitLab"}'s stand-in; ` +
      `check green ${CI_MS}–${2 * CI_MS} ms after each new head, approval ${APPROVE_MS}–` +
      `${2 * APPROVE_MS} ms after opening; default poll settings`,
  );
  console.log(
    "mode      landed  last requirement → merge requested (median / p95 / max)  " +
      "merge → journal row (median / p95)  API requests per PR (all / 304 / charged)  wall",
  );
  for (const mode of MODES) {
    const r = await round(mode);
    const toMerge = r.landed.map((l) => l.toMergeRequest);
    const toRow = r.landed.map((l) => l.toRow);
    const per = (n: number) => (n / Math.max(1, r.landed.length)).toFixed(1);
    console.log(
      `${mode.padEnd(9)} ${String(r.landed.length).padStart(3)}/${TASKS}   ` +
        `${ms(quantile(toMerge, 0.5))} / ${ms(quantile(toMerge, 0.95))} / ${
          ms(Math.max(...toMerge))
        }`
          .padEnd(56) +
        `${ms(quantile(toRow, 0.5))} / ${ms(quantile(toRow, 0.95))}`.padEnd(36) +
        `${per(r.stats.requests)} / ${per(r.stats.notModified)} / ${per(r.stats.charged)}`
          .padEnd(43) +
        `${(r.elapsed / 1000).toFixed(1)} s`,
    );
  }
}
