/**
 * A team's day, reproducible (issue 35): a real npm library (minimist, from the registry) behind
 * the GitHub stand-in, whose `main` is protected (a CI bot runs the library's real tape suite on
 * every pull request head and reports the required check `ci/test`; a reviewer approves each pull
 * request); an orchestrator with `max_agents: 0`; one worker running host agents and one running
 * them in podman containers. The plan has the day's kinds of work: tests and docs, work that
 * changes nothing, a broken test CI catches, a flaky CI run, two tasks owning the same file, a
 * pull request a person closes, and a slow task. Meanwhile the host worker and the orchestrator
 * are killed with SIGKILL and started again. It prints the figures: pull requests, CI runs,
 * rebases, open → merged times, attempts, where agents ran, what is left on the remote.
 *
 *   deno run -A bench/team_trial.ts [--keep]
 *
 * Needs npm (the registry), node, podman with the test image (tests/_container_image.ts builds it;
 * without podman both workers run host agents and the trial says so).
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { startFakeGithub } from "../tests/fakes/github_api.ts";
import { startWorker, type WorkerProcess } from "../tests/_workers.ts";
import { AGENT, CLI, planYaml, type Step } from "../tests/_e2e.ts";
import { IMAGE_AGENT, testImage } from "../tests/_container_image.ts";
import { verifyJournalText } from "../lib/journal/verify.ts";

const { values } = parseArgs({ args: Deno.args, options: { keep: { type: "boolean" } } });
const dir = await Deno.makeTempDir({ prefix: "team-trial-" });
const started = Date.now();
const say = (line: string) =>
  console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);

async function run(cwd: string, cmd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

// 1. The library, as the registry ships it, made a repository; tape for the CI bot.
say("npm pack minimist");
await run(dir, "npm", "pack", "minimist", "--silent");
const tarball = (await Array.fromAsync(Deno.readDir(dir))).find((e) => e.name.endsWith(".tgz"))!;
await run(dir, "tar", "xzf", tarball.name);
const repo = join(dir, "minimist");
await Deno.rename(join(dir, "package"), repo);
const ci = join(dir, "ci");
await Deno.mkdir(ci);
say("npm install tape (the CI bot's)");
await run(ci, "npm", "install", "--no-audit", "--no-fund", "--silent", "tape@5");

// 2. The day's plan.
const test = (name: string, body: string) =>
  `'use strict';\nvar parse = require('../');\nvar test = require('tape');\n\n` +
  `test(${JSON.stringify(name)}, function (t) {\n${body}\tt.end();\n});\n`;
const write = (path: string, text: string) => ["write", path, text];
const steps: Step[] = [
  {
    id: "dotted-nested",
    script: [
      write(
        "test/trial_dotted.js",
        test("dotted nested keys", "\tt.equal(parse(['--a.b.c', '5']).a.b.c, 5);\n"),
      ),
      ["report", "nested dotted keys tested"],
    ],
  },
  {
    id: "short-cluster",
    script: [
      write(
        "test/trial_short.js",
        test(
          "clustered short flags",
          "\tt.deepEqual(parse(['-abc']), { _: [], a: true, b: true, c: true });\n",
        ),
      ),
      ["report"],
    ],
  },
  {
    id: "string-opt",
    script: [
      write(
        "test/trial_string.js",
        test(
          "string option keeps digits",
          "\tt.equal(parse(['--s', '007'], { string: 's' }).s, '007');\n",
        ),
      ),
      ["report"],
    ],
  },
  {
    id: "readme-usage",
    owned: ["README.md"],
    script: [["append", "README.md", "\n## Trial: usage\n\n`parse(process.argv.slice(2))`\n"], [
      "sleep",
      3000,
    ], ["report"]],
  },
  {
    id: "readme-example",
    owned: ["README.md"],
    script: [["append", "README.md", "\n## Trial: example\n\n`node example/parse.js -a beep`\n"], [
      "report",
    ]],
  },
  { id: "noop-check", script: [["report", "already covered: nothing to change"]] },
  {
    id: "broken-then-fixed",
    script: [
      ["first_attempt", [
        write(
          "test/trial_bool.js",
          test("--x is a boolean", "\tt.equal(parse(['--x']).x, false);\n"),
        ),
        ["report"],
      ]],
      ["retry", [
        write(
          "test/trial_bool.js",
          test("--x is a boolean", "\tt.equal(parse(['--x']).x, true);\n"),
        ),
        ["report"],
      ]],
    ],
  },
  {
    id: "flaky-ci",
    script: [
      write("test/trial_flaky.js", test("unknown keeps going", "\tt.ok(parse(['--q']).q);\n")),
      ["report"],
    ],
  },
  {
    id: "closed-by-person",
    script: [
      write(
        "test/trial_closed.js",
        test("double dash", "\tt.deepEqual(parse(['--', '-a'])._, ['-a']);\n"),
      ),
      ["report"],
    ],
  },
  {
    id: "slow-one",
    role: "qa",
    script: [
      write("test/trial_slow.js", test("numbers", "\tt.equal(parse(['-n', '3']).n, 3);\n")),
      ["sleep", 12000],
      ["report"],
    ],
  },
];
const image = await testImage();
const podman = image.ok;
if (!podman) say(`no container runtime (${image.skip}): the second worker runs host agents too`);
const agentCommand = (inImage: boolean) =>
  JSON.stringify(["deno", "run", "-A", inImage ? IMAGE_AGENT : AGENT]);
const suffix = crypto.randomUUID().slice(0, 8).toUpperCase();
const tokenEnv = `TRIAL_GH_TOKEN_${suffix}`;
const serviceYaml = (fake: string, inImage: boolean) =>
  `cli: generic\ncli_command: ${agentCommand(inImage)}\nroles:\n  backend: {}\n  qa: {}\n` +
  `max_agents: 0\nheartbeat_timeout_s: 15\n` +
  (inImage
    ? `isolation: container\nmemory_mb: 512\ncpu_cores: 1\ncontainer:\n  image: ${
      image.ok ? image.ref : ""
    }\n`
    : "") +
  `landing:\n  mode: pull_request\n  provider: github\n  api_url: ${fake}\n  repo: acme/minimist\n` +
  `  token_env: ${tokenEnv}\n`;
await run(repo, "git", "init", "-q", "-b", "main");
await run(repo, "git", "config", "user.email", "lead@team.example");
await run(repo, "git", "config", "user.name", "lead");
await Deno.writeTextFile(join(repo, ".gitignore"), "node_modules\n");
await run(repo, "git", "add", "-A");
await run(repo, "git", "commit", "-q", "-m", "minimist as the registry ships it");
await Deno.writeTextFile(join(repo, "plan.yaml"), planYaml([{ name: "day", steps }]));

// 3. The stand-in: protected main, the CI bot (the real tape suite per head), the reviewer.
const ciRuns: { sha: string; ms: number; ok: boolean; rerun: boolean }[] = [];
let flakyDone = false;
// deno-lint-ignore prefer-const
let fake: Awaited<ReturnType<typeof startFakeGithub>>;
const runCi = async (sha: string, rerun: boolean) => {
  const t0 = Date.now();
  const tree = await Deno.makeTempDir({ prefix: "ci-" });
  try {
    await run(fake.bare, "git", "worktree", "add", "-q", "--detach", tree, sha);
    await Deno.symlink(join(ci, "node_modules"), join(tree, "node_modules"));
    const out = await new Deno.Command("sh", {
      args: ["-c", "node_modules/.bin/tape 'test/*.js' 2>&1"],
      cwd: tree,
      stdout: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    let ok = out.success;
    let summary = text.split("\n").filter((l) => /^# (pass|fail|tests)|^not ok/.test(l)).join("\n");
    const flaky = !rerun && !flakyDone &&
      (await run(tree, "git", "ls-files", "test")).includes("trial_flaky.js");
    if (flaky) {
      flakyDone = true;
      ok = false;
      summary = "the CI runner lost its connection (infrastructure)";
    }
    ciRuns.push({ sha, ms: Date.now() - t0, ok, rerun });
    fake.setCheck(sha, {
      name: "ci/test",
      status: "completed",
      conclusion: ok ? "success" : "failure",
      summary,
    });
  } finally {
    await run(fake.bare, "git", "worktree", "remove", "--force", tree).catch(() => {});
  }
};
const approveLater = new Set<number>();
fake = await startFakeGithub(repo, {
  repo: "acme/minimist",
  requiredChecks: ["ci/test"],
  approvals: 1,
  ci: () => [{ name: "ci/test", status: "in_progress" }],
  rerun: (sha) => {
    void runCi(sha, true);
    return { name: "ci/test", status: "in_progress" };
  },
  onEvent: (e) => {
    if (e.kind === "head") void runCi(e.sha!, false);
    if (e.kind === "opened") approveLater.add(e.number!);
  },
});
// The reviewer looks every second: approves, except the pull request a person closes.
const reviewer = setInterval(async () => {
  for (const n of [...approveLater]) {
    approveLater.delete(n);
    const pr = fake.pulls().find((p) => p.number === n)!;
    if (/closed-by-person/.test(pr.title)) {
      await fake.closeByPerson(n, "lead", "We keep the old behaviour; not needed.");
    } else await fake.review(n, "reviewer", "APPROVED");
  }
}, 1000);

// The repository's service.yaml names the stand-in: committed like any project file.
await Deno.writeTextFile(join(repo, "service.yaml"), serviceYaml(fake.url, false));
await run(repo, "git", "add", "-A");
await run(repo, "git", "commit", "-q", "-m", "the day's plan and service.yaml");
// The lead sets main up once (its hook refuses pushes to main: an admin's update-ref).
const seedTip = (await run(repo, "git", "rev-parse", "HEAD")).trim();
await run(repo, "git", "push", "-q", fake.bare, `HEAD:refs/heads/seed`);
await run(fake.bare, "git", "update-ref", "refs/heads/main", seedTip);
await run(fake.bare, "git", "update-ref", "-d", "refs/heads/seed");
await run(repo, "git", "remote", "add", "origin", fake.bare);
await run(repo, "git", "fetch", "-q", "origin");

// 4. Two workers: host agents, and podman containers.
const clone = async (name: string, inImage: boolean, roles: string) => {
  const path = join(dir, name);
  await run(dir, "git", "clone", "-q", fake.bare, path);
  await run(path, "git", "config", "user.email", `${name}@team.example`);
  await run(path, "git", "config", "user.name", name);
  await Deno.writeTextFile(join(path, "service.yaml"), serviceYaml(fake.url, inImage));
  return { path, roles };
};
const hostClone = await clone("w-host", false, "backend,qa");
const podClone = await clone("w-pod", podman, "backend");
const port = 20_000 + Math.floor(Math.random() * 9_000);
const server = `http://127.0.0.1:${port}`;
// What rootless podman needs of the session, besides what any machine has.
const workerEnv = Object.fromEntries(
  ["XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"].flatMap((k) => {
    const v = Deno.env.get(k);
    return v ? [[k, v]] : [];
  }),
);
const startHost = () =>
  startWorker(hostClone.path, server, "w-host", {
    slots: 2,
    roles: hostClone.roles,
    env: workerEnv,
  });
let wHost: WorkerProcess = startHost();
const wPod = startWorker(podClone.path, server, "w-pod", {
  slots: 2,
  roles: podClone.roles,
  env: workerEnv,
});

// 5. The orchestrator, as `service run` in a terminal.
const lines: string[] = [];
const orchestrator = () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", repo, "run", "--port", String(port)],
    env: { NO_COLOR: "1", [tokenEnv]: "gh-token" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const read = async (s: ReadableStream<Uint8Array>) => {
    let buf = "";
    const decoder = new TextDecoder();
    for await (const bytes of s) {
      buf += decoder.decode(bytes, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    }
  };
  void read(child.stdout);
  void read(child.stderr);
  return child;
};
const until = async (what: string, check: () => boolean, ms = 300_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`trial: no ${what}:\n${lines.join("\n")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};
say("service run (max_agents: 0)");
let run1 = orchestrator();
// kill -9 of the orchestrator once three pull requests are open; then `service run` again.
await until("three pull requests", () => fake.pulls().length >= 3);
run1.kill("SIGKILL");
await run1.status;
say(`orchestrator killed with SIGKILL (${fake.pulls().length} pull requests open or done)`);
await new Promise((r) => setTimeout(r, 1000));
run1 = orchestrator();
// kill -9 of the host worker while it runs the slow task; then it is started again.
await until(
  "the slow task on w-host",
  () => wHost.lines.some((l) => /slow-one: agent .* starting/.test(l)),
);
await new Promise((r) => setTimeout(r, 3000));
await wHost.kill();
say("worker w-host killed with SIGKILL mid-task; started again");
wHost = startHost();
const code = (await run1.status).code;
clearInterval(reviewer);
const total = (Date.now() - started) / 1000;
say(`service run exited ${code}`);

// 6. The figures.
const runId =
  /run (run-\S+)/.exec(lines.findLast((l) => /^run run-\S+ completed/.test(l)) ?? "")?.[1] ??
    JSON.parse(await Deno.readTextFile(join(repo, ".sdd/runtime/orchestrator.json"))).run_id;
const journal = verifyJournalText(
  await Deno.readTextFile(join(repo, ".sdd/runs", runId, "journal.jsonl")),
);
const rows = journal.rows.map((r) => r.row);
const of = (type: string) => rows.filter((r) => r.type === type);
const pulls = fake.pulls();
const openedAt = new Map<number, number>();
const mergedAt = new Map<number, number>();
for (const e of fake.events) {
  if (e.kind === "opened") openedAt.set(e.number!, e.at);
  if (e.kind === "merged") mergedAt.set(e.number!, e.at);
}
const latencies = [...mergedAt].map(([n, at]) => (at - openedAt.get(n)!) / 1000).sort((a, b) =>
  a - b
);
const median = latencies[Math.floor(latencies.length / 2)] ?? 0;
const claims = of("task_claimed");
const byWorker = new Map<string, number>();
for (const c of claims) {
  byWorker.set(String(c.data.worker), (byWorker.get(String(c.data.worker)) ?? 0) + 1);
}
const isolations = new Set(claims.map((c) => `${c.data.worker}: ${c.data.isolation ?? "(none)"}`));
const left = (await run(
  fake.bare,
  "git",
  "for-each-ref",
  "--format=%(refname)",
  "refs/service",
  "refs/heads/agent",
))
  .split("\n").filter(Boolean);
const figures = {
  "journal verified": journal.verified,
  "exit code of the last service run": code,
  "wall time (s)": Math.round(total),
  "tasks": steps.length,
  "pull requests opened": pulls.length,
  "merged": pulls.filter((p) => p.merged).length,
  "closed unmerged": pulls.filter((p) => p.state === "closed" && !p.merged).length,
  "tasks landed with no change (no pull request)":
    of("task_merged").filter((r) => r.data.empty).length,
  "pushes refused on main (the service pushing to main)": (await fake.refusedPushes()).length,
  "CI runs (heads + re-runs)": `${ciRuns.length} (${ciRuns.filter((r) => !r.rerun).length} + ${
    ciRuns.filter((r) => r.rerun).length
  })`,
  "CI run time, median (s)":
    (ciRuns.map((r) => r.ms).sort((a, b) => a - b)[Math.floor(ciRuns.length / 2)] ?? 0) / 1000,
  "failed checks re-run": of("task_pr_check_rerun").length,
  "rebases pushed":
    of("task_pr_updated").filter((r) => /rebased/.test(String(r.data.reason))).length,
  "open -> merged, median / max (s)": `${median} / ${latencies.at(-1) ?? 0}`,
  "agent sessions (claims)": claims.length,
  "claims by worker": Object.fromEntries(byWorker),
  "isolation recorded": [...isolations],
  "attempts retried (task_retried)": of("task_retried").map((r) =>
    `${r.data.task_id}: ${String(r.data.reason).slice(0, 200)}`
  ),
  "failed tasks": of("task_failed").map((r) => r.data.task_id),
  "wait reasons journaled": [...new Set(of("task_waiting").map((r) => String(r.data.reason)))],
  "refs of the run left on the remote": left.filter((r) => !r.endsWith("/main")),
};
console.log(JSON.stringify(figures, null, 2));
console.log("--- the last service run's terminal ---\n" + lines.slice(-25).join("\n"));
await wHost[Symbol.asyncDispose]();
await wPod.stop();
await fake[Symbol.asyncDispose]();
if (values.keep) console.log(`kept: ${dir}`);
else await Deno.remove(dir, { recursive: true }).catch(() => {});
Deno.exit(0);
