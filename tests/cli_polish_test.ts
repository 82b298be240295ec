/**
 * The command line as a user meets it: version, help, "did you mean", and the input mistakes
 * that must stop before any work with an error naming the cause and the fix. One child process
 * per case (the real entry point), walked from a table.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SERVICE_VERSION } from "../lib/version.ts";
import { tempDir } from "./helpers.ts";
import { CLI, cli, workspace } from "./_e2e.ts";

const CASES: { args: string[]; code: number; out: RegExp; name: string }[] = [
  {
    name: "--version",
    args: ["--version"],
    code: 0,
    out: new RegExp(`service ${SERVICE_VERSION}`),
  },
  { name: "-V", args: ["-V"], code: 0, out: /^service \d+\.\d+\.\d+ \(deno / },
  { name: "help <command>", args: ["help", "retry"], code: 0, out: /Usage: service retry <task>/ },
  {
    name: "help of an unknown command",
    args: ["help", "retyr"],
    code: 1,
    out: /did you mean `service retry`/,
  },
  {
    name: "mistyped command",
    args: ["stauts"],
    code: 1,
    out: /unknown command "stauts" \(did you mean `service status`\?\)/,
  },
  {
    name: "mistyped option",
    args: ["runs", "--jsno"],
    code: 1,
    out: /Unknown option '--jsno' \(did you mean --json\?\)/,
  },
  {
    name: "an option whose value is missing (the next option follows)",
    args: ["worker", "--server", "--dir", "."],
    code: 1,
    out: /Option '--server' argument is ambiguous\. \(did you forget its value\?\)/,
  },
  {
    name: "extra positional of run",
    args: ["run", "plan.yaml", "other.yaml"],
    code: 1,
    out: /other\.yaml/,
  },
  { name: "a port that is not a port", args: ["run", "--port", "99999"], code: 1, out: /port/ },
  {
    name: "cancel without a task",
    args: ["cancel"],
    code: 1,
    out: /name the tasks to cancel .* or pass --all/,
  },
  {
    name: "cancel of an unknown task",
    args: ["cancel", "nope"],
    code: 1,
    out: /nope: no such task \(`service status` lists them\)/,
  },
  { name: "retry of an unknown task", args: ["retry", "nope"], code: 1, out: /nope: no such task/ },
  {
    name: "stop --timeout that is not a number, with the fix",
    args: ["stop", "--timeout", "abc"],
    code: 1,
    out: /--timeout abc is not a number of seconds\n {2}fix: give the seconds to wait/,
  },
  {
    name: "stop --timeout -3 is not taken for a missing value",
    args: ["stop", "--timeout", "-3"],
    code: 1,
    out: /a value that starts with a dash is written --timeout=VALUE/,
  },
  {
    name: "workers cordon without a name prints its fix",
    args: ["workers", "cordon"],
    code: 1,
    out: /unknown use: service workers cordon\n {2}fix: /,
  },
  ...[["gui", "gui serve"], ["audit", "audit verify"], ["mcp", "mcp catalog"]].map((
    [typed, meant],
  ) => ({
    name: `the first word of '${meant}' suggests it`,
    args: [typed],
    code: 1,
    out: new RegExp(`unknown command "${typed}" \\(did you mean \`service ${meant}\`\\?\\)`),
  })),
  { name: "runs with no run yet", args: ["runs"], code: 0, out: /no runs/i },
  { name: "help of worker names --poll-ms", args: ["help", "worker"], code: 0, out: /--poll-ms N/ },
  ...["abc", "0", "2.5", "60001"].map((ms) => ({
    name: `worker --poll-ms ${ms}`,
    args: ["worker", "--server", "http://127.0.0.1:9", "--poll-ms", ms],
    code: 1,
    out: new RegExp(`--poll-ms ${ms} is not a number of milliseconds \\(10-60000\\)`),
  })),
];

Deno.test("CLI: version, help, did-you-mean and mistakes that stop before any work", async (t) => {
  await using dir = await tempDir();
  await workspace(dir.path, [{ name: "s", steps: [{ id: "a", script: [["report"]] }] }]);
  for (const c of CASES) {
    await t.step(c.name, async () => {
      const r = await cli(dir.path, ...c.args);
      assert.equal(r.code, c.code, r.out);
      assert.match(r.out, c.out);
    });
  }
  // None of them started a run.
  await assert.rejects(Deno.stat(join(dir.path, ".sdd/runs")));
});

Deno.test("CLI: a --root that does not exist is an error naming it, before any work", async () => {
  const r = await cli("/nonexistent/workspace", "status");
  assert.equal(r.code, 1);
  assert.match(r.out, /--root \/nonexistent\/workspace is not a directory/);
});

Deno.test("doctor names a broken service.yaml once, in the config check, and skips the checks that would read it", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{ name: "s", steps: [{ id: "a", script: [["report"]] }] }]);
  const valid = await Deno.readTextFile(join(dir.path, "service.yaml"));
  for (
    const [broken, said] of [
      ["port: [9000\n", /YamlSyntaxError: .*service\.yaml:\d+:\d+: not valid YAML/],
      ["prot: 9000\n", /ValidationError: .*unknown key 'prot' \(did you mean 'port'\?\)/],
    ] as const
  ) {
    await Deno.writeTextFile(join(dir.path, "service.yaml"), valid + broken);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "--root", dir.path, "doctor", "--json"],
      env: { NO_COLOR: "1", SERVICE_PORT: "0" },
      stdout: "piped",
    }).output();
    assert.equal(out.code, 1);
    const checks: { name: string; ok: boolean; detail: string }[] =
      JSON.parse(new TextDecoder().decode(out.stdout)).checks;
    assert.deepEqual(checks.filter((c) => !c.ok).map((c) => c.name), ["config"], broken);
    assert.match(checks.find((c) => c.name === "config")!.detail, said);
    assert.ok(
      !checks.some((c) => c.name === "port"),
      "no port is checked for a server that would not start",
    );
  }
});

Deno.test("doctor reports what `service run` would refuse: a heartbeat timeout that orphans every agent", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{ name: "s", steps: [{ id: "a", script: [["report"]] }] }],
    "heartbeat_timeout_s: 5\n",
  );
  const doctor = await cli(dir.path, "doctor", "--json");
  assert.equal(doctor.code, 1);
  const check = JSON.parse(doctor.out).checks.find((c: { name: string }) =>
    c.name === "heartbeat_timeout_s"
  );
  assert.equal(check.ok, false);
  assert.match(check.fix, /set heartbeat_timeout_s to at least 30/);
  const run = await cli(dir.path, "run", "--port", "0");
  assert.equal(run.code, 1);
  assert.match(run.out, /heartbeat_timeout_s is 5 s/);
  await assert.rejects(Deno.stat(join(dir.path, ".sdd/runs")), "nothing was started");
});
