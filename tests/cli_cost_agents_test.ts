/** Integration: the real `cli.ts cost` and `cli.ts agents` over prepared temporary workspaces. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;
const NOW = Math.floor(Date.now() / 1000);

async function cli(root: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A workspace with cost.jsonl (two models, three tasks, one record 3 days old) and a report. */
async function spendWorkspace(root: string, budgetUsd = 10): Promise<void> {
  await Deno.mkdir(join(root, ".sdd/metrics"), { recursive: true });
  await Deno.mkdir(join(root, ".sdd/runtime"), { recursive: true });
  const records = [
    {
      ts: NOW - 3 * 86400,
      task_id: "old",
      model: "opus",
      micro_usd: 4_000_000,
      input_tokens: 9000,
      output_tokens: 900,
    },
    {
      ts: NOW - 3600,
      task_id: "t1",
      model: "sonnet",
      micro_usd: 1_234_560,
      input_tokens: 1000,
      output_tokens: 200,
    },
    {
      ts: NOW - 1200,
      task_id: "t1",
      model: "haiku",
      micro_usd: 10_000,
      input_tokens: 500,
      output_tokens: 50,
    },
    {
      ts: NOW - 60,
      task_id: "t2",
      model: "sonnet",
      micro_usd: 765_440,
      input_tokens: 700,
      output_tokens: 70,
    },
  ];
  await Deno.writeTextFile(
    join(root, ".sdd/metrics/cost.jsonl"),
    records.map((r) => JSON.stringify(r)).join("\n") + "\n",
  );
  await Deno.writeTextFile(
    join(root, ".sdd/runtime/cost_report.json"),
    JSON.stringify({
      total_micro_usd: 6_010_000,
      by_model: {},
      by_task: {},
      budget_micro_usd: budgetUsd * 1_000_000,
    }),
  );
}

Deno.test("service cost with no spend says so and exits 0", async () => {
  await using ws = await tempDir();
  const r = await cli(ws.path, ["cost"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /no spend recorded yet/);
  const j = await cli(ws.path, ["cost", "--json"]);
  assert.equal(j.code, 0);
  const view = JSON.parse(j.stdout);
  assert.equal(view.source, "none");
  assert.deepEqual(view.rows, []);
  assert.equal(view.total_micro_usd, 0);
  assert.equal(view.budget_micro_usd, null);
});

Deno.test("service cost --by model shows dollars with 4 decimals, tokens, total and budget share", async () => {
  await using ws = await tempDir();
  await spendWorkspace(ws.path);
  const r = await cli(ws.path, ["cost"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.match(lines[0], /spend by model/);
  assert.match(lines[1], /^MODEL\s+COST\s+TOKENS IN\s+TOKENS OUT$/);
  assert.match(lines[2], /^opus\s+\$4\.0000\s+9000\s+900$/);
  assert.match(lines[3], /^sonnet\s+\$2\.0000\s+1700\s+270$/);
  assert.match(lines[4], /^haiku\s+\$0\.0100\s+500\s+50$/);
  assert.match(r.stdout, /total: \$6\.0100 of budget \$10\.0000 \(60\.1% used\)/);
});

Deno.test("service cost --by task --last 24h keeps only the window; --json has its shape", async () => {
  await using ws = await tempDir();
  await spendWorkspace(ws.path);
  const r = await cli(ws.path, ["cost", "--by", "task", "--last", "24h"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /spend by task in the last 24h/);
  assert.match(r.stdout, /^t1\s+\$1\.2446\s+1500\s+250$/m);
  assert.match(r.stdout, /^t2\s+\$0\.7654\s+700\s+70$/m);
  assert.doesNotMatch(r.stdout, /^old/m);
  assert.match(r.stdout, /spent in the last 24h: \$2\.0100/);

  const j = await cli(ws.path, ["cost", "--by=task", "--last=30m", "--json"]);
  assert.equal(j.code, 0, j.stderr);
  const view = JSON.parse(j.stdout);
  assert.deepEqual(Object.keys(view).sort(), [
    "bad_lines",
    "batch",
    "budget_micro_usd",
    "budget_used",
    "by",
    "last",
    "rows",
    "since",
    "source",
    "total_micro_usd",
    "window_micro_usd",
  ]);
  assert.equal(view.by, "task");
  assert.equal(view.last, "30m");
  assert.equal(view.source, "cost.jsonl");
  // 30 minutes back: t1's haiku record (20 min old) and t2.
  assert.deepEqual(view.rows.map((x: { key: string }) => x.key), ["t2", "t1"]);
  assert.equal(view.window_micro_usd, 775_440);
  assert.equal(view.total_micro_usd, 6_010_000);
  assert.equal(view.budget_micro_usd, 10_000_000);
  assert.equal(view.budget_used, 0.601);
  assert.deepEqual(view.batch, { saved_micro_usd: 0, batch_micro_usd: 0, tasks: 0 });

  const week = JSON.parse((await cli(ws.path, ["cost", "--last", "7d", "--json"])).stdout);
  assert.equal(week.window_micro_usd, 6_010_000);
});

Deno.test("service cost: budget_usd of service.yaml wins; budget reached is called out", async () => {
  await using ws = await tempDir();
  await spendWorkspace(ws.path);
  await Deno.writeTextFile(
    join(ws.path, "service.yaml"),
    "cli: claude\nbudget_usd: 5\nroles:\n  backend: {}\n",
  );
  const r = await cli(ws.path, ["cost"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /total: \$6\.0100 of budget \$5\.0000 \(120\.2% used\)/);
  assert.match(r.stdout, /budget reached: scheduling stops; raise budget_usd/);
});

Deno.test("service cost falls back to cost_report.json without cost.jsonl, and skips torn lines", async () => {
  await using ws = await tempDir();
  await Deno.mkdir(join(ws.path, ".sdd/runtime"), { recursive: true });
  await Deno.writeTextFile(
    join(ws.path, ".sdd/runtime/cost_report.json"),
    JSON.stringify({
      total_micro_usd: 300,
      by_model: { sonnet: { micro_usd: 300, input_tokens: 10, output_tokens: 2 } },
      by_task: { t9: { micro_usd: 300, model: "sonnet" } },
      budget_micro_usd: null,
    }),
  );
  const j = JSON.parse((await cli(ws.path, ["cost", "--json"])).stdout);
  assert.equal(j.source, "cost_report.json");
  assert.deepEqual(j.rows, [
    { key: "sonnet", micro_usd: 300, input_tokens: 10, output_tokens: 2, records: 0 },
  ]);
  const t = await cli(ws.path, ["cost", "--by", "task"]);
  assert.match(t.stdout, /^t9\s+\$0\.0003/m);
  assert.match(t.stdout, /no budget: set budget_usd/);

  await Deno.mkdir(join(ws.path, ".sdd/metrics"));
  await Deno.writeTextFile(
    join(ws.path, ".sdd/metrics/cost.jsonl"),
    JSON.stringify({
      ts: NOW,
      task_id: "t9",
      model: "sonnet",
      micro_usd: 300,
      input_tokens: 10,
      output_tokens: 2,
    }) +
      '\n{"ts": 1, "task_',
  );
  const torn = await cli(ws.path, ["cost"]);
  assert.equal(torn.code, 0);
  assert.match(
    torn.stdout,
    /skipped 1 unreadable line\(s\) of \.sdd\/metrics\/cost\.jsonl \(line 2\): delete/,
  );
});

Deno.test("service cost: bad option values exit 1 naming the fix", async () => {
  await using ws = await tempDir();
  const cases: [string[], RegExp][] = [
    [["--by", "day"], /unknown --by value "day": use --by model or --by task/],
    [["--last", "3w"], /bad --last value "3w": .*--last 24h/],
    [["--last", "0h"], /bad --last value "0h"/],
    [["--last"], /argument missing; see `service cost --help`/],
    [["--frobnicate"], /Unknown option '--frobnicate'; see `service cost --help`/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(ws.path, ["cost", ...args]);
    assert.equal(r.code, 1, args.join(" "));
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
  }
});

/** A PATH directory with a fake `claude` executable (other CLIs absent). */
async function fakeBin(dir: string): Promise<string> {
  const bin = join(dir, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(join(bin, "claude"), "#!/bin/sh\nexit 0\n");
  await Deno.chmod(join(bin, "claude"), 0o755);
  return bin;
}

Deno.test("service agents --json: readiness per adapter, key names but never values, cooldowns, sessions", async () => {
  // The test's own clock, not the module's: under --parallel a module may load minutes before
  // this test runs, and every age and cooldown below is measured from here.
  const NOW = Math.floor(Date.now() / 1000);
  await using ws = await tempDir();
  await using side = await tempDir();
  const bin = await fakeBin(side.path);
  await Deno.writeTextFile(join(ws.path, "service.yaml"), "cli: claude\nroles:\n  backend: {}\n");
  const runtime = join(ws.path, ".sdd/runtime");
  await Deno.mkdir(join(runtime, "pids"), { recursive: true });
  await Deno.mkdir(join(runtime, "heartbeats"), { recursive: true });
  await Deno.writeTextFile(
    join(runtime, "rate_limits.json"),
    JSON.stringify({
      version: 1,
      cooldowns: { codex: { since: NOW - 60, until: NOW + 240 }, gemini: { since: 1, until: 2 } },
    }),
  );
  const sleeper = new Deno.Command("sleep", { args: ["30"] }).spawn();
  try {
    const log = join(runtime, "s-live.log");
    await Deno.writeTextFile(log, "hello\nworld\n");
    await Deno.writeTextFile(
      join(runtime, "pids/s-live.json"),
      JSON.stringify({
        session_id: "s-live",
        pid: sleeper.pid,
        pgid: sleeper.pid,
        adapter: "claude",
        task_id: "t1",
        run_id: "r1",
        command: ["claude"],
        log_path: log,
        started_at: NOW - 125,
      }),
    );
    await Deno.writeTextFile(
      join(runtime, "heartbeats/s-live.json"),
      JSON.stringify({
        session_id: "s-live",
        pid: sleeper.pid,
        alive: true,
        last_output_at: NOW - 5,
        log_bytes: 6,
        updated_at: NOW - 10,
      }),
    );
    await Deno.writeTextFile(
      join(runtime, "pids/s-dead.json"),
      JSON.stringify({ session_id: "s-dead", pid: 2 ** 22 + 7, task_id: "t2", started_at: NOW }),
    );
    const secret = "sk-ant-very-secret-value";
    const env = { PATH: bin, ANTHROPIC_API_KEY: secret, OPENAI_API_KEY: "" };
    const r = await cli(ws.path, ["agents", "--json"], env);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes(secret), "key values are never printed");
    const out = JSON.parse(r.stdout);
    assert.equal(out.configured, "claude");
    const by = Object.fromEntries(
      out.adapters.map((a: { name: string }) => [a.name, a]),
    );
    assert.deepEqual(Object.keys(by), ["aider", "claude", "codex", "gemini", "qwen"]);
    assert.equal(by.claude.configured, true);
    assert.equal(by.claude.binary_path, join(bin, "claude"));
    assert.deepEqual(by.claude.api_keys_set, ["ANTHROPIC_API_KEY"]);
    assert.equal(by.claude.ready, true);
    assert.equal(by.codex.binary_path, null);
    assert.equal(by.codex.api_key_ok, false, "an empty variable is not a key");
    assert.ok(by.codex.cooldown_remaining_s > 200 && by.codex.cooldown_remaining_s <= 240);
    assert.equal(by.gemini.cooldown_remaining_s, 0, "an ended cooldown is 0");
    assert.match(by.codex.fix, /install the codex CLI/);

    const sessions = Object.fromEntries(
      out.sessions.map((s: { session_id: string }) => [s.session_id, s]),
    );
    const live = sessions["s-live"];
    assert.equal(live.alive, true);
    assert.equal(live.task_id, "t1");
    assert.equal(live.pid, sleeper.pid);
    assert.ok(live.elapsed_s >= 125 && live.elapsed_s < 200, String(live.elapsed_s));
    assert.equal(live.log_bytes, 12, "the log file is fresher than the heartbeat");
    assert.ok(live.last_output_age_s <= 5);
    assert.ok(live.heartbeat_age_s >= 10);
    assert.equal(sessions["s-dead"].alive, false);

    const text = await cli(ws.path, ["agents"], env);
    assert.equal(text.code, 0, text.stderr);
    assert.ok(!text.stdout.includes(secret));
    assert.match(text.stdout, /^claude \*\s+\S+\/claude\s+ANTHROPIC_API_KEY set\s+-\s+yes$/m);
    assert.match(
      text.stdout,
      /^codex\s+codex: not on PATH\s+OPENAI_API_KEY unset \(or 1 other\)\s+2\d\ds\s+no$/m,
    );
    assert.match(text.stdout, /^s-live\s+t1\s+\d+\s+yes\s+2m\d\ds\s+\d+s ago\s+12$/m);
    assert.match(text.stdout, /^s-dead\s+t2\s+\d+\s+no \(stale\)/m);
    assert.match(text.stdout, /stale PID files/);
  } finally {
    sleeper.kill();
    await sleeper.status;
  }
});

Deno.test("service agents with no config and no sessions; a generic config lists its CLI", async () => {
  await using ws = await tempDir();
  await using side = await tempDir();
  const bin = await fakeBin(side.path);
  const r = await cli(ws.path, ["agents"], { PATH: bin });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /no agent sessions running/);
  assert.doesNotMatch(r.stdout, /configured in service\.yaml/);

  await Deno.writeTextFile(
    join(ws.path, "service.yaml"),
    "cli: generic\ncli_command: [claude, --print]\nroles:\n  backend: {}\n",
  );
  const j = JSON.parse((await cli(ws.path, ["agents", "--json"], { PATH: bin })).stdout);
  assert.equal(j.configured, "generic");
  const generic = j.adapters.find((a: { name: string }) => a.name === "generic");
  assert.equal(generic.binary_path, join(bin, "claude"));
  assert.equal(generic.ready, true, "generic needs no key");
  assert.deepEqual(j.sessions, []);

  const bad = await cli(ws.path, ["agents", "--all"], { PATH: bin });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Unknown option '--all'; see `service agents --help`/);
});
