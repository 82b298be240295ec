/** The real server on a real port, used over HTTP by fetch and by the real CLI. */
import assert from "node:assert/strict";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { TaskClient } from "../lib/tasks/client.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

async function cli(root: string, args: string[], env: Record<string, string> = {}) {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, ...args],
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: o.code,
    stdout: new TextDecoder().decode(o.stdout),
    stderr: new TextDecoder().decode(o.stderr),
  };
}

Deno.test("the real server serves the task API over HTTP; the CLI claims from it and reads its status", async () => {
  const root = await Deno.makeTempDir({ prefix: "service-int-" });
  await Deno.writeTextFile(
    `${root}/service.yaml`,
    "cli: claude\nroles: [backend, qa]\nheartbeat_timeout_s: 45\n",
  );
  const warnings: string[] = [];
  const server = await startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: [],
    announce: false,
    tickMs: 50,
    warn: (l) => warnings.push(l),
    app: SERVER_APP,
  });
  try {
    const client = new TaskClient({ url: server.url, token: "" });
    const created = await client.request<{ tasks: { id: string; status: string }[] }>(
      "POST",
      "/tasks",
      {
        tasks: [
          { id: "build", title: "Build", role: "backend" },
          { id: "test", title: "Test", role: "qa", depends_on: ["build"] },
        ],
      },
    );
    assert.deepEqual(created?.tasks.map((t) => t.status), ["OPEN", "BLOCKED"]);

    const claimed = await cli(root, [
      "backlog",
      "claim",
      "--role",
      "backend",
      "--session-id",
      "ext-1",
    ], { SERVICE_SERVER_URL: server.url });
    assert.equal(claimed.code, 0, claimed.stderr);
    const task = JSON.parse(claimed.stdout);
    assert.equal(task.id, "build");
    assert.equal(task.session_id, "ext-1");
    const none = await cli(root, ["backlog", "claim", "--role", "backend"], {
      SERVICE_SERVER_URL: server.url,
    });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no task ready for role backend/);

    await client.request("POST", "/tasks/build/heartbeat");
    const done = await client.request<{ status: string }>("POST", "/tasks/build/complete", {
      summary: "built",
    });
    assert.equal(done?.status, "DONE");
    assert.equal((await client.get("test")).status, "OPEN");

    const status = await cli(root, ["status", "--json"], { SERVICE_SERVER_URL: server.url });
    assert.equal(status.code, 0, status.stderr);
    const s = JSON.parse(status.stdout);
    assert.equal(s.tasks.DONE, 1);
    assert.equal(s.tasks.OPEN, 1);
    assert.equal(s.verification_nudge.unverified_count, 1);

    // The ticker writes the export and flushes the access log.
    await new Promise((r) => setTimeout(r, 200));
    const exported = JSON.parse(await Deno.readTextFile(`${root}/.sdd/runtime/task-backlog.json`));
    assert.equal(exported.tasks.length, 2);
    const access = await Deno.readTextFile(`${root}/.sdd/runtime/access.jsonl`);
    assert.match(access, /"path":"\/tasks\/next"/);
  } finally {
    await server.shutdown();
    await Deno.remove(root, { recursive: true });
  }
  assert.deepEqual(warnings, []);
});

Deno.test("the CLI reports TaskStoreUnavailable with how to start the server", async () => {
  const root = await Deno.makeTempDir();
  try {
    const r = await cli(root, ["backlog", "claim"], { SERVICE_SERVER_URL: "http://127.0.0.1:9" });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /TaskStoreUnavailable: connection refused at http:\/\/127\.0\.0\.1:9\n {2}fix: start the server in this workspace: `service serve`/,
    );
    assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("service status reads the workspace files with no server: red ALERT and yellow notice", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/.sdd/metrics`, { recursive: true });
    const rec = (id: string, v: boolean) =>
      JSON.stringify({
        task_id: id,
        session_id: "s",
        timestamp: 1,
        tests_run: v,
        quality_gates_run: false,
        completion_signals_checked: false,
        verified: v,
      });
    const ledger = `${root}/.sdd/metrics/verification_nudges.jsonl`;
    await Deno.writeTextFile(
      ledger,
      [rec("a", true), rec("b", true), rec("c", true), rec("d", false)].join("\n") + "\n",
    );
    const env = { SERVICE_SERVER_URL: "http://127.0.0.1:9" };
    const notice = await cli(root, ["status"], env);
    assert.equal(notice.code, 0, notice.stderr);
    assert.match(notice.stdout, /workspace files; no server running/);
    assert.match(notice.stdout, /notice: 1 of 4 completions unverified/);
    assert.doesNotMatch(notice.stdout, /ALERT/);
    await Deno.writeTextFile(ledger, rec("e", false) + "\n", { append: true });
    const alert = await cli(root, ["status"], env);
    assert.match(
      alert.stdout,
      /ALERT: 2 of 5 completions unverified \(40\.0% > threshold 30\.0%\)\. Recent: e, d\./,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("every command of spec §4.4 answers --help; unfinished ones exit 1 saying which issue brings them", async () => {
  const root = await Deno.makeTempDir();
  try {
    for (
      const name of [
        "run",
        "stop",
        "status",
        "ps",
        "agents",
        "integrations list",
        "cost",
        "doctor",
        "debug",
        "serve",
        "mcp catalog",
        "backlog claim",
        "audit verify",
        "preview",
      ]
    ) {
      const r = await cli(root, [...name.split(" "), "--help"]);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`Usage: service ${name}`));
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("service doctor fails with fixes on a broken workspace; service debug writes a redacted bundle", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${root}/service.yaml`,
      "cli: generic\ncli_command: no-such-agent-binary --x\nroles: [qa]\nmcp_servers:\n  s: {env: {API_TOKEN: sk-live-abcdefghijklmnop}}\n",
    );
    await Deno.mkdir(`${root}/.sdd/runtime/pids`, { recursive: true });
    await Deno.writeTextFile(
      `${root}/.sdd/runtime/pids/dead.json`,
      JSON.stringify({ pid: 999999999, session_id: "dead" }),
    );
    const r = await cli(root, ["doctor", "--json"], { SERVICE_PORT: "0" });
    assert.equal(r.code, 1);
    const report = JSON.parse(r.stdout);
    const failed = Object.fromEntries(
      report.checks.filter((c: { ok: boolean }) => !c.ok).map((
        c: { name: string; fix: string },
      ) => [c.name, c.fix]),
    );
    assert.match(failed["workspace"], /git init/);
    assert.match(
      failed["agent cli generic"],
      /install the generic CLI or add its directory to PATH/,
    );
    // `service run` removes stale PID files itself: doctor warns, naming the file.
    const pidCheck = report.checks.find((c: { name: string }) => c.name === "pid files");
    assert.equal(pidCheck.warning, true);
    assert.match(pidCheck.fix, /dead\.json/);
    const d = await cli(root, ["debug", "--json"]);
    assert.equal(d.code, 0, d.stderr);
    const bundle = JSON.parse(d.stdout);
    const config = await Deno.readTextFile(`${bundle.dir}/service.yaml`);
    assert.doesNotMatch(config, /sk-live/);
    assert.match(config, /redacted/);
    const inBundle = JSON.parse(await Deno.readTextFile(`${bundle.dir}/doctor.json`));
    assert.deepEqual(
      inBundle.map((c: { name: string }) => c.name),
      report.checks.map((c: { name: string }) => c.name),
      "the bundle holds the checks `service doctor` runs",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
