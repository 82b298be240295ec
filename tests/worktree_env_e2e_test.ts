/**
 * End to end, worktree environments (DESIGN.md §13): real git, real agent processes (the scripted
 * agent through the generic adapter), the real task server. A Node-like project gets its `.env`
 * copied, its `node_modules` linked or installed by a setup from a local package directory, and
 * two agents serve on their leased PORT at once; a Python-like project's agents run their tests
 * and leave caches, none of which is staged, diffed or merged; a failing setup ends the attempt
 * with a reason everyone shows; a killed orchestrator's port leases are taken back.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { taskDetail } from "../lib/review/activity.ts";
import { workspacePaths } from "../lib/workspace.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import {
  CLI,
  cli,
  columnsOf,
  journalOf,
  projectionAgreed,
  sh,
  until,
  withEnv,
  workspace,
} from "./_e2e.ts";

const quiet = { out: () => {}, port: 0, app: SERVER_APP };

type Row = { type: string; data: Record<string, unknown> };

/** Files of a commit's tree. */
async function treeFiles(root: string, rev = "main"): Promise<string[]> {
  return (await sh(root, "ls-tree", "-r", "--name-only", rev)).split("\n").filter((l) => l);
}

/** Every lease file left in the workspace. */
async function leaseFiles(root: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(workspacePaths(root).portLeases)))
      .map((e) => e.name).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
}

const SERVER_JS = `const http = require("http");
const fs = require("fs");
const greet = require("greet");
const env = Object.fromEntries(fs.readFileSync(".env", "utf8").trim().split("\\n").map((l) => l.split("=")));
http.createServer((req, res) => res.end(greet(env.GREETING) + " on " + process.env.PORT))
  .listen(Number(process.env.PORT), "127.0.0.1");
`;

/**
 * Waits until both agents announced their port, asks each server and writes what it said, then
 * keeps its own server up until the other agent has asked too.
 */
const CHECK_JS = `const fs = require("fs");
const ports = process.env.E2E_BARRIER + "/ports";
const done = process.env.E2E_BARRIER + "/done";
const me = process.env.SERVICE_TASK_ID;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const both = async (dir) => { for (let i = 0; i < 600 && fs.readdirSync(dir).length < 2; i++) await sleep(50); };
(async () => {
  await both(ports);
  const lines = [];
  for (const f of fs.readdirSync(ports).sort()) {
    const port = fs.readFileSync(ports + "/" + f, "utf8").trim();
    for (let i = 0; i < 200; i++) {
      try {
        lines.push(f + ": " + await (await fetch("http://127.0.0.1:" + port + "/")).text());
        break;
      } catch { await sleep(50); }
    }
  }
  fs.mkdirSync("out", { recursive: true });
  fs.writeFileSync("out/" + me + ".txt", "PORT=" + process.env.PORT + "\\n" + lines.join("\\n") + "\\n");
  fs.writeFileSync(done + "/" + me, "");
  await both(done);
})();
`;

/** A Node-like project: a dependency in a local package directory, its lockfile, a server. */
async function nodeProject(
  root: string,
  extraConfig: string,
  steps: Parameters<typeof workspace>[1],
) {
  await workspace(root, steps, extraConfig, {
    ".gitignore": "node_modules/\n.env\n",
    "package.json": JSON.stringify({
      name: "app",
      version: "1.0.0",
      private: true,
      dependencies: { greet: "file:pkgs/greet" },
    }),
    "package-lock.json": JSON.stringify(
      {
        name: "app",
        version: "1.0.0",
        lockfileVersion: 3,
        requires: true,
        packages: {
          "": { name: "app", version: "1.0.0", dependencies: { greet: "file:pkgs/greet" } },
          "node_modules/greet": { resolved: "pkgs/greet", link: true },
          "pkgs/greet": { version: "1.0.0" },
        },
      },
      null,
      2,
    ),
    "server.js": SERVER_JS,
    "check.js": CHECK_JS,
    ".worktreeinclude": "# what Claude Code copies too\nconfig/*.local.json\n",
  });
  await Deno.mkdir(join(root, "pkgs/greet"), { recursive: true });
  await Deno.writeTextFile(
    join(root, "pkgs/greet/package.json"),
    JSON.stringify({ name: "greet", version: "1.0.0", main: "index.js" }),
  );
  await Deno.writeTextFile(
    join(root, "pkgs/greet/index.js"),
    'module.exports = (n) => "hello " + n;\n',
  );
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "the greet package");
  // The user's checkout as it is on their machine: dependencies installed, a local .env.
  await Deno.mkdir(join(root, "node_modules/greet"), { recursive: true });
  await Deno.writeTextFile(
    join(root, "node_modules/greet/package.json"),
    '{"name":"greet","main":"index.js"}',
  );
  await Deno.writeTextFile(
    join(root, "node_modules/greet/index.js"),
    'module.exports = (n) => "hello " + n;\n',
  );
  await Deno.writeTextFile(join(root, "node_modules/.marker"), "the user's own install\n");
  await Deno.writeTextFile(join(root, ".env"), "GREETING=hi-from-env\n");
  await Deno.mkdir(join(root, "config"));
  await Deno.writeTextFile(join(root, "config/dev.local.json"), '{"debug": true}\n');
}

Deno.test("node-like project: .env and .worktreeinclude files copied, node_modules linked, a setup that installs from a local package directory, two agents serving on their leased PORT at once, a teardown in each worktree before its removal; nothing of it merged", async () => {
  await using dir = await tempDir();
  await using barrier = await tempDir();
  await Deno.mkdir(join(barrier.path, "ports"));
  await Deno.mkdir(join(barrier.path, "done"));
  const teardowns = join(barrier.path, "..", `teardown-${crypto.randomUUID()}.txt`);
  using _env = withEnv({ E2E_BARRIER: barrier.path, E2E_TEARDOWN: teardowns });
  const serve = (id: string) => ({
    id,
    role: "frontend",
    script: [
      ["require_prompt", "PORTS: "], // told to serve on its own port
      [
        "run",
        'node server.js > /dev/null 2>&1 & echo "$PORT" > "$E2E_BARRIER/ports/$SERVICE_TASK_ID"; node check.js; kill $!',
      ],
      ["report"],
    ],
  });
  await nodeProject(
    dir.path,
    "  frontend:\n    worktree:\n      symlink: [node_modules]\n" +
      // The gates run on the merged tree, which gets the same .env and node_modules.
      "    quality_gates:\n      - name: env and modules\n" +
      `        command: node -e "require('greet'); require('fs').readFileSync('.env')"\n` +
      "  devops:\n    worktree:\n      setup: [npm ci --offline --no-audit --no-fund]\n" +
      "max_agents: 3\nagent_env: [E2E_BARRIER, E2E_TEARDOWN]\n" +
      "worktree:\n  copy: ['.env']\n  ports: 1\n  port_range: [24100, 24199]\n" +
      // Runs in the worktree before its removal, with the session's port still leased.
      `  teardown: ['echo "$SERVICE_TASK_ID $PORT $(cat .env)" >> "$E2E_TEARDOWN"']\n`,
    [{
      name: "s",
      steps: [
        serve("web1"),
        serve("web2"),
        {
          id: "build",
          role: "devops",
          script: [
            ["run", "node -e \"process.stdout.write(require('greet')('builder'))\" > built.txt"],
            ["report"],
          ],
        },
      ],
    }],
  );
  const status = await sh(dir.path, "status", "--porcelain");
  const result = await runPlan({ root: dir.path, ...quiet });
  assert.equal(result.status, "completed", result.problems.join("; "));

  const web1 = await Deno.readTextFile(join(dir.path, "out/web1.txt"));
  const web2 = await Deno.readTextFile(join(dir.path, "out/web2.txt"));
  const port1 = Number(/^PORT=(\d+)/.exec(web1)![1]);
  const port2 = Number(/^PORT=(\d+)/.exec(web2)![1]);
  assert.notEqual(port1, port2, "each agent had its own port");
  for (const port of [port1, port2]) assert.ok(port >= 24100 && port <= 24199, `${port} in range`);
  // Each agent reached both servers: they served at the same time, each on its own PORT, each
  // with the copied .env and the linked node_modules.
  const both = `web1: hello hi-from-env on ${port1}\nweb2: hello hi-from-env on ${port2}\n`;
  assert.equal(web1, `PORT=${port1}\n${both}`);
  assert.equal(web2, `PORT=${port2}\n${both}`);
  assert.equal(await Deno.readTextFile(join(dir.path, "built.txt")), "hello builder");

  const files = await treeFiles(dir.path);
  assert.deepEqual(files.filter((f) => /node_modules|\.env/.test(f)), [], "nothing of it merged");
  assert.equal(await sh(dir.path, "status", "--porcelain"), status, "the checkout is as it was");
  assert.equal(
    await Deno.readTextFile(join(dir.path, "node_modules/.marker")),
    "the user's own install\n",
    "the linked node_modules survived its worktrees' removal",
  );
  assert.deepEqual(await leaseFiles(dir.path), [], "every port released at reap");
  const torn = (await Deno.readTextFile(teardowns)).split("\n").filter((l) => l).sort();
  await Deno.remove(teardowns);
  assert.equal(torn.length, 3, "a teardown per worktree");
  assert.ok(torn.includes(`web1 ${port1} GREETING=hi-from-env`), torn.join("\n"));
  assert.ok(torn.includes(`web2 ${port2} GREETING=hi-from-env`), torn.join("\n"));

  const journal = await journalOf(dir.path, result.runId);
  const rows = journal.rows.map((r) => r.row as Row);
  const prepared = Object.fromEntries(
    rows.filter((r) => r.type === "task_worktree_prepared").map((r) => [r.data.task_id, r.data]),
  );
  assert.deepEqual(prepared.web1.copied, [".env", "config/dev.local.json"], ".worktreeinclude");
  assert.deepEqual(prepared.web1.linked, ["node_modules"]);
  assert.deepEqual(prepared.web1.ports, [port1]);
  assert.deepEqual(prepared.web2.ports, [port2]);
  assert.deepEqual(prepared.build.linked, []);
  const setup = prepared.build.setup as { command: string; exit_code: number; ms: number }[];
  assert.deepEqual(setup.map((s) => [s.command, s.exit_code]), [[
    "npm ci --offline --no-audit --no-fund",
    0,
  ]]);
  const claimedAt = rows.findIndex((r) => r.type === "task_claimed" && r.data.task_id === "build");
  const preparedAt = rows.findIndex((r) =>
    r.type === "task_worktree_prepared" && r.data.task_id === "build"
  );
  assert.equal(preparedAt, claimedAt + 1, "journaled with the claim");

  // "What happened" shows the worktree and the setup's output in the kept session log.
  const detail = await taskDetail(workspacePaths(dir.path), result.runId, "build");
  const attempt = detail!.task.attempts[0];
  assert.deepEqual(attempt.prepared?.setup.map((s) => s.exit_code), [0]);
  assert.match(attempt.log?.tail ?? "", /──── service: worktree setup 1\/1: npm ci/);
  assert.match(attempt.log?.tail ?? "", /added 1 package/);
  const gates = rows.filter((r) => r.type === "task_verification_recorded");
  assert.ok(gates.filter((r) => r.data.quality_gates_run).length >= 2, "the gates ran and passed");
});

/** A Python-like library with unittest tests; the repository tracks one .pyc on purpose. */
async function pythonProject(root: string, steps: Parameters<typeof workspace>[1], extra = "") {
  await workspace(root, steps, `max_agents: 2\n${extra}`, {
    "setup.cfg": "[metadata]\nname = calc\n",
  });
  const files: Record<string, string> = {
    "calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_add.py":
      "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n",
    "fixtures/sample.pyc": "v1\n",
  };
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "the calc library");
}

/** An agent adding `calc/<name>.py` with a test, running the tests, leaving every cache there is. */
function pythonAgent(name: string, op: string, extra: unknown[][] = []): unknown[][] {
  return [
    ["write", `calc/${name}.py`, `def ${name}(a, b):\n    return a ${op} b\n`],
    [
      "write",
      `tests/test_${name}.py`,
      `import unittest\nfrom calc.${name} import ${name}\n\nclass T(unittest.TestCase):\n    def test_${name}(self):\n        self.assertEqual(${name}(6, 3), 6 ${op} 3)\n`,
    ],
    ["run", "python3 -m unittest discover -s tests -t . -v"],
    ["write", ".pytest_cache/v/cache/nodeids", "[]\n"],
    ["write", ".coverage", "coverage data\n"],
    ["write", "calc.egg-info/PKG-INFO", "Name: calc\n"],
    ["run", "python3 -m compileall -q calc"],
    ...extra,
    // Agents commit their own work, as real ones do.
    ["run", `git add -A && git commit -q -m "${name}"`],
    ["report"],
  ];
}

/**
 * A setup that waits (up to 30 s) until every agent's setup has begun: it passes only when the
 * setups run side by side, not one after another.
 */
const SETUP_BARRIER = `touch "$E2E_BARRIER/$SERVICE_TASK_ID"; n=0; ` +
  `while [ "$(ls "$E2E_BARRIER" | wc -l)" -lt 2 ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done; ` +
  `[ "$(ls "$E2E_BARRIER" | wc -l)" -ge 2 ] || { echo "setups ran one after another" >&2; exit 1; }`;

Deno.test("python-like project: agents run their tests and leave caches; nothing of them is staged, diffed or merged, no binary conflict costs a retry, a tracked .pyc stays tracked; setups run side by side", async () => {
  await using dir = await tempDir();
  await using barrier = await tempDir();
  using _env = withEnv({ E2E_BARRIER: barrier.path });
  const setup = `agent_env: [E2E_BARRIER]\nworktree:\n  setup:\n    - ${
    JSON.stringify(SETUP_BARRIER)
  }\n`;
  await pythonProject(dir.path, [{
    name: "s",
    steps: [
      {
        id: "mul",
        script: pythonAgent("mul", "*", [
          ["write", "fixtures/sample.pyc", "v2\n"], // the repository's own .pyc, changed
          // An agent that forces a cache in: it is taken out of its branch before the diff.
          ["run", "git add -f calc/__pycache__ && git commit -q -m 'oops, caches'"],
        ]),
      },
      { id: "sub", script: pythonAgent("sub", "-") },
    ],
  }], setup);
  const result = await runPlan({ root: dir.path, ...quiet });
  assert.equal(result.status, "completed", result.problems.join("; "));
  const files = await treeFiles(dir.path);
  const junk = files.filter((f) =>
    /__pycache__|\.pyc$|\.pytest_cache|\.coverage|egg-info/.test(f) && f !== "fixtures/sample.pyc"
  );
  assert.deepEqual(junk, [], "no cache merged");
  for (const f of ["calc/mul.py", "calc/sub.py", "tests/test_mul.py", "tests/test_sub.py"]) {
    assert.ok(files.includes(f), `${f} merged`);
  }
  assert.equal(await sh(dir.path, "show", "main:fixtures/sample.pyc"), "v2\n", "still tracked");
  assert.equal(await sh(dir.path, "status", "--porcelain"), "", "the checkout is clean");

  const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row as Row);
  const kinds = rows.map((r) => r.type);
  const failures = rows.filter((r) => r.type === "task_verification_failed").map((r) => r.data);
  assert.deepEqual(failures, [], "no setup failed (they ran side by side), no merge conflicted");
  assert.ok(!kinds.includes("task_retried"), "no attempt lost to a conflict");
  assert.ok(!kinds.includes("merge_conflict"));
  for (const task of ["mul", "sub"]) {
    const diff = await Deno.readTextFile(
      join(dir.path, ".sdd/runs", result.runId, "review/diffs", `${task}.diff`),
    );
    const named = [...diff.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1]);
    assert.deepEqual(
      named.filter((f) => /__pycache__|\.pyc$|cache|coverage|egg-info/.test(f)),
      task === "mul" ? ["fixtures/sample.pyc"] : [],
      `${task}'s diff`,
    );
  }
  assert.ok(rows.some((r) => r.type === "task_verification_recorded" && r.data.tests_run));
});

Deno.test("a failing setup ends the attempt as setup_failed with its last error line — the agent never starts — in the journal, the board, status and doctor; a setup past its time limit too", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [
        { id: "broken", script: [["write", "never.txt", "x\n"], ["report"]] },
        { id: "slow", role: "docs", script: [["write", "never.txt", "x\n"], ["report"]] },
      ],
    }],
  );
  // Each role's own setup: backend's fails, docs' waits on a command that never ends.
  const config = (await Deno.readTextFile(join(dir.path, "service.yaml")))
    .replace(
      "  backend: {}\n",
      "  backend:\n    worktree:\n      setup:\n        - echo preparing\n" +
        `        - "echo 'connecting…'; echo 'ERROR: database unreachable at 127.0.0.1:5432' >&2; exit 3"\n`,
    )
    .replace(
      "  docs: {}\n",
      "  docs:\n    worktree:\n      setup_timeout_s: 1\n      setup: ['sleep 30']\n",
    );
  await Deno.writeTextFile(join(dir.path, "service.yaml"), config);
  await sh(dir.path, "commit", "-q", "-am", "setup");
  const result = await runPlan({ root: dir.path, ...quiet });
  assert.equal(result.status, "failed");
  const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row as Row);
  const of = (task: string, type: string) =>
    rows.filter((r) => r.type === type && r.data.task_id === task);
  const reason = "setup_failed: echo 'connecting…'; echo 'ERROR: database unreachable at " +
    "127.0.0.1:5432' >&2; exit 3: ERROR: database unreachable at 127.0.0.1:5432";
  assert.equal(of("broken", "task_claimed").length, 3, "three attempts, each claimed");
  assert.deepEqual(
    of("broken", "task_worktree_prepared").map((r) =>
      (r.data.setup as { exit_code: number }[]).map((s) => s.exit_code)
    ),
    [[0, 3], [0, 3], [0, 3]],
  );
  assert.deepEqual(of("broken", "task_verification_failed").at(-1)!.data.signals, [{
    kind: "setup_failed",
    detail: reason,
  }]);
  assert.equal(of("broken", "task_failed")[0].data.reason, `${reason} (after 3 failed attempts)`);
  assert.match(
    String(of("slow", "task_failed")[0].data.reason),
    /^setup_failed: sleep 30: timed out \(setup_timeout_s: 1 s for the whole setup\)/,
  );
  assert.deepEqual(rows.filter((r) => r.type === "agent_exited"), [], "no agent ever started");
  assert.ok(!(await treeFiles(dir.path)).includes("never.txt"));
  // Worktrees and leases are gone; each attempt's log kept the setup's output under its header.
  assert.deepEqual(await Array.fromAsync(Deno.readDir(join(dir.path, ".sdd/worktrees"))), []);
  const detail = await taskDetail(workspacePaths(dir.path), result.runId, "broken");
  assert.equal(detail!.task.attempts.length, 3);
  assert.match(detail!.task.attempts[0].log?.tail ?? "", /worktree setup 2\/2 FAILED: exit 3/);
  assert.match(detail!.task.attempts[0].log?.tail ?? "", /ERROR: database unreachable/);

  const receipt = await projectionAgreed(dir.path, result.runId);
  assert.deepEqual(columnsOf(receipt).gated.sort(), ["broken", "slow"]);
  const card = receipt.board.columns.gated.find((c: { task_id: string }) => c.task_id === "broken");
  assert.deepEqual(card?.gates, [{ kind: "setup_failed", detail: reason }]);

  const status = await cli(dir.path, "status");
  assert.match(status.out, /broken[\s\S]*setup_failed: echo 'connecting…'/);
  const doctor = await cli(dir.path, "doctor");
  assert.match(doctor.out, /broken, slow failed in the worktree setup, not in the agent/);
  assert.match(doctor.out, /worktree environment of role docs: .*setup: sleep 30 \(limit 1 s\)/);
});

Deno.test("kill -9 of the orchestrator: the next run takes back the port leases of its dead sessions", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [{
        id: "long",
        script: [
          ["if_missing", "wip.txt", [["write", "wip.txt", "kept\n"], ["sleep", 60_000]]],
          ["report", "finished"],
        ],
      }],
    }],
    "worktree:\n  ports: 2\n  port_range: [24200, 24299]\n",
  );
  const first = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", dir.path, "run", "--port", "0"],
    env: { NO_COLOR: "1" },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const runs = join(dir.path, ".sdd/runs");
  await until("the agent's worktree prepared", async () => {
    try {
      for await (const run of Deno.readDir(runs)) {
        const text = await Deno.readTextFile(join(runs, run.name, "journal.jsonl"));
        if (text.includes('"task_worktree_prepared"')) return true;
      }
    } catch { /* not yet */ }
    return false;
  });
  first.kill("SIGKILL");
  await first.status;
  assert.deepEqual((await leaseFiles(dir.path)).sort(), ["24200.json", "24201.json"]);

  const lines: string[] = [];
  const second = await runPlan({ root: dir.path, ...quiet, out: (l) => lines.push(l) });
  assert.equal(second.status, "completed", second.problems.join("; "));
  assert.ok(
    lines.some((l) => /took back 2 port lease\(s\) of ended sessions: 24200 \(s-/.test(l)),
    lines.join("\n"),
  );
  const rows = (await journalOf(dir.path, second.runId)).rows.map((r) => r.row as Row);
  const ports = rows.filter((r) => r.type === "task_worktree_prepared").map((r) => r.data.ports);
  assert.deepEqual(ports, [[24200, 24201], [24200, 24201]], "the reclaimed ports leased again");
  assert.deepEqual(await leaseFiles(dir.path), []);
});

Deno.test("service stop leaves no port lease behind: the next run has none to take back", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [{
        id: "long",
        script: [
          ["if_missing", "wip.txt", [["write", "wip.txt", "kept\n"], ["sleep", 60_000]]],
          ["report", "finished"],
        ],
      }],
    }],
    "worktree:\n  ports: 2\n  port_range: [24300, 24399]\n",
  );
  assert.equal((await cli(dir.path, "run", "--detach", "--port", "0")).code, 0);
  await until("the agent's ports leased", async () => (await leaseFiles(dir.path)).length === 2);
  const stop = await cli(dir.path, "stop");
  assert.equal(stop.code, 0, stop.out);
  assert.deepEqual(await leaseFiles(dir.path), [], "the stopped session's ports went back");
  const lines: string[] = [];
  const second = await runPlan({ root: dir.path, ...quiet, out: (l) => lines.push(l) });
  assert.equal(second.status, "completed", second.problems.join("; "));
  assert.ok(!lines.some((l) => /took back/.test(l)), lines.join("\n"));
});
