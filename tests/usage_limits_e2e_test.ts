/**
 * End to end: a usage limit that names its reset time parks the adapter until then, tasks start
 * with the fallback adapter meanwhile, no attempt is burnt, and the parked adapter is back after
 * the reset (DESIGN.md §15). Real git, `service run` in its own process (test files running in
 * parallel change this one's environment), real agent processes: the scripted agent as the
 * configured `generic` CLI and, through a module adapter, as the fallback.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT, CLI, cli, journalOf, sh, workspace } from "./_e2e.ts";
import { runDeno, tempDir } from "./helpers.ts";

Deno.test("usage limits: a limit naming its reset parks the adapter until then; the fallback runs meanwhile, no attempt is burnt, and the adapter is back after the reset", async () => {
  await using dir = await tempDir("limits-");
  const flag = join(dir.path, "..", `${crypto.randomUUID()}.flag`);
  // Claude Code 1.x's words, the reset 5 s ahead (epoch seconds): the first run of t1 hits it.
  const hit = `test -f ${flag} || { touch ${flag}; m="Claude AI usage limit"; ` +
    `echo "$m reached|$(( $(date +%s) + 5 ))"; exit 1; }`;
  await workspace(dir.path, [
    {
      name: "one",
      steps: [{
        id: "t1",
        // The fallback's attempt outlasts the reset, so t2 becomes ready only after it.
        script: [["run", hit], ["sleep", 5500], ["write", "one.txt", "1\n"], ["report"]],
      }],
    },
    {
      name: "two",
      depends: ["one"],
      steps: [{ id: "t2", script: [["write", "two.txt", "2\n"], ["report"]] }],
    },
  ]);
  await Deno.mkdir(join(dir.path, "adapters"));
  await Deno.writeTextFile(
    join(dir.path, "adapters/backup.ts"),
    `export default {
  name: "backup", binary: "deno", apiKeyEnv: [], passEnv: [],
  acceptsMcpConfig: false, supportsEffort: false,
  buildArgv: (input) => ["run", "-A", ${JSON.stringify(AGENT)}, input.prompt],
};
`,
  );
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      "roles:\n  backend: {}\nfallback_adapters: [backup]\n" +
      "adapters:\n  backup: { module: adapters/backup.ts }\n",
  );
  await sh(dir.path, "add", "-A");
  await sh(dir.path, "commit", "-qm", "fallback");
  try {
    const run = await runDeno([
      "run",
      "-A",
      CLI,
      "--root",
      dir.path,
      "run",
      "plan.yaml",
      "--port",
      "0",
    ], {
      clearEnv: true,
    });
    assert.equal(run.code, 0, run.text);
    const [runDir] = await Array.fromAsync(Deno.readDir(join(dir.path, ".sdd/runs")));
    const rows = (await journalOf(dir.path, runDir.name)).rows;
    const limited = rows.find((r) => r.row.type === "rate_limited")!;
    assert.equal(limited.row.data.adapter, "generic");
    assert.equal(limited.row.data.rule, "claude:usage_limit");
    assert.equal(limited.row.data.reset_named, true);
    const named = Number(/\|(\d+)/.exec(String(limited.row.data.line))![1]);
    assert.equal(limited.row.data.until, named, "parked until the reset the line names");

    const claims = rows.filter((r) => r.row.type === "task_claimed");
    assert.deepEqual(
      claims.map((r) => [r.row.data.task_id, r.row.data.adapter]),
      [["t1", "generic"], ["t1", "backup"], ["t2", "generic"]],
      "the journal names the adapter of each attempt",
    );
    assert.ok(
      Date.parse(claims[1].row.ts) < named * 1000,
      "the fallback started while generic was parked",
    );
    assert.ok(Date.parse(claims[2].row.ts) >= named * 1000, "generic is back after the reset");
    const retried = rows.find((r) => r.row.type === "task_retried")!;
    assert.match(String(retried.row.data.reason), /generic is parked.*no attempt counted/);
    assert.match(run.text, /generic parked until \S+, the reset time its limit names/);
    assert.match(run.text, /t1: generic is parked; starting with fallback backup/);
    assert.match(
      run.text,
      /t1: agent \S+ started \(backend, attempt 2, counted as 1 of 3, backup\)/,
      "the limited run counted no attempt, and the terminal says so",
    );

    const store = JSON.parse(
      await Deno.readTextFile(join(dir.path, ".sdd/runtime/task-backlog.json")),
    );
    const t1 = store.tasks.find((t: { id: string }) => t.id === "t1");
    assert.equal(t1.attempts, 1, "the limited attempt burnt no attempt");
  } finally {
    await Deno.remove(flag).catch(() => {});
  }
});

Deno.test("status shows a parked adapter with the reset time its limit named", async () => {
  await using dir = await tempDir("parked-");
  const runtime = join(dir.path, ".sdd/runtime");
  await Deno.mkdir(runtime, { recursive: true });
  const until = Math.floor(Date.now() / 1000) + 2 * 3600 + 30;
  await Deno.writeTextFile(
    join(runtime, "rate_limits.json"),
    JSON.stringify({
      version: 1,
      cooldowns: {
        claude: { until, since: until - 3 * 3600, rule: "claude:usage_limit", named: true },
        codex: { until: until - 2 * 3600, since: until - 2 * 3600 - 300, rule: "token:429" },
      },
    }),
  );
  const json = await cli(dir.path, "status", "--json");
  const cooldowns = JSON.parse(json.out).rate_limits.cooldowns;
  assert.deepEqual(
    cooldowns.map((c: { adapter: string; reset_named: boolean }) => [c.adapter, c.reset_named]),
    [
      ["claude", true],
      ["codex", false],
    ],
  );
  assert.equal(cooldowns[0].until, new Date(until * 1000).toISOString());
  const text = await cli(dir.path, "status");
  assert.match(
    text.out,
    new RegExp(
      `claude parked until ${new Date(until * 1000).toISOString().replaceAll(".", "\\.")} ` +
        `\\(the reset time its limit names; back in 2h 0m\\)`,
    ),
  );
  assert.match(text.out, /codex parked until \S+ \(rate-limit cooldown; back in \d+s\)/);
});
