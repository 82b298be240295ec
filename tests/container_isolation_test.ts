/**
 * `isolation: container` end to end, with real containers (podman or docker) on the small image
 * of tests/_container_image.ts: the scripted agent runs inside, edits, commits and reports; the
 * limits are seen inside; the restricted network reaches the task server and allow_hosts and
 * nothing else of the host; every failure of the runtime is a ContainerError before
 * `run_started` and nothing is spawned; a timeout and a SIGKILL of the orchestrator leave no
 * container behind and keep the work. The tests that need a runtime skip, loudly, only where
 * none answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { ContainerError } from "../lib/container/errors.ts";
import { LABELS, workspaceLabel } from "../lib/container/session.ts";
import { runtimeCall } from "../lib/container/runtime.ts";
import { CLI, journalOf, planYaml, runEnv, sh, type Step, until } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { IMAGE_AGENT, skipping, testImage } from "./_container_image.ts";
import { ServiceConfigSchema } from "../lib/config/schema.ts";
import { containerSettings } from "../lib/container/settings.ts";
import { probeIsolation } from "../lib/container/probe.ts";
import { treeContainer } from "../lib/container/tree_runner.ts";
import { evaluateGates } from "../lib/merge/gates.ts";

const image = await testImage();
const ignore = skipping(image);
const ref = image.ok ? image.ref : "localhost/none:0";
const quiet = { out: () => {}, port: 0, app: SERVER_APP };

/** What a test's service.yaml says beyond the scripted agent in the test image. */
interface Isolated {
  /** Top-level keys (default: 256 MB and one CPU). */
  top?: string;
  /** Keys of the `container` block besides `image`. */
  container?: string;
  image?: string;
}

/** A repository whose agents run in containers of the test image. */
async function containerWorkspace(dir: string, steps: Step[], o: Isolated = {}): Promise<void> {
  await sh(dir, "init", "-q", "-b", "main");
  await sh(dir, "config", "user.email", "e2e@localhost");
  await sh(dir, "config", "user.name", "e2e");
  await Deno.writeTextFile(join(dir, "README.md"), "# e2e\n");
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", IMAGE_AGENT])}\n` +
      `roles:\n  backend: {}\nisolation: container\n${o.top ?? "memory_mb: 256\ncpu_cores: 1\n"}` +
      `container:\n  image: ${o.image ?? ref}\n${o.container ?? ""}`,
  );
  await Deno.writeTextFile(join(dir, "plan.yaml"), planYaml([{ name: "s", steps }]));
  await sh(dir, "add", "-A");
  await sh(dir, "commit", "-q", "-m", "init");
}

/**
 * A setup command that records where it ran (the host name: a container has its own; this
 * machine may itself be a container, so no marker file tells) and the network interfaces it saw.
 */
function setupProbe(file: string): string {
  return `{ cat /proc/sys/kernel/hostname; ` +
    `id -u; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '; } > ${file}`;
}

/** The names of the containers of the workspace at `dir` (running or not). */
async function containersOf(dir: string): Promise<string[]> {
  if (!image.ok) return [];
  const r = await runtimeCall(image.bin, [
    "ps",
    "--all",
    "--filter",
    `label=${LABELS.workspace}=${workspaceLabel(dir)}`,
    "--format",
    "{{.Names}}",
  ]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split("\n").filter(Boolean);
}

/** True when a live session log of the workspace at `dir` holds `text`. */
async function aLogSays(dir: string, text: string): Promise<boolean> {
  const runtime = join(dir, ".sdd/runtime");
  for (const e of await Array.fromAsync(Deno.readDir(runtime)).catch(() => [])) {
    if (!e.name.endsWith(".log")) continue;
    if ((await Deno.readTextFile(join(runtime, e.name)).catch(() => "")).includes(text)) {
      return true;
    }
  }
  return false;
}

/** Files under `dir` not owned by this process's user (handed to a container and not back). */
async function foreignFiles(dir: string): Promise<string[]> {
  const out = await new Deno.Command("find", {
    args: [dir, "!", "-uid", String(Deno.uid())],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean);
}

Deno.test({
  name: "container: setup runs in a container with the network (phase 1), then the agent edits, " +
    "commits and reports (phase 2); the quality gate and the teardown run in containers too; " +
    "its work lands; " +
    "the claim, the sealed evidence and the " +
    "session log say where it ran; the memory and process limits are visible inside",
  ignore,
  async fn() {
    await using dir = await tempDir();
    // The gate passes only in a container: a host name of its own, not root, the checkout's files
    // out of sight (only the tree it checks is mounted), git working.
    const boxedGate = `test "$(cat /proc/sys/kernel/hostname)" != "${Deno.hostname()}" && ` +
      `test "$(id -u)" != 0 && ! test -e ${
        join(dir.path, "service.yaml")
      } && git log -1 --format=%s`;
    await containerWorkspace(dir.path, [{
      id: "edit",
      script: [
        ["write", "hello.txt", "hello from a container\n"],
        [
          "run",
          "cat /sys/fs/cgroup/memory.max 2>/dev/null > limit.txt || " +
          "cat /sys/fs/cgroup/memory/memory.limit_in_bytes > limit.txt; id -u > uid.txt; " +
          "cat /sys/fs/cgroup/pids.max 2>/dev/null > pids.txt || " +
          "cat /sys/fs/cgroup/pids/pids.max > pids.txt",
        ],
        ["run", "git add -A && git commit -q -m 'the agent commits inside'"],
        ["report", "edited in a container"],
      ],
      evidence: [{ name: "greeting", command: "cat hello.txt" }],
    }], {
      top:
        `memory_mb: 256\ncpu_cores: 1\nworktree:\n  setup: [${
          JSON.stringify(setupProbe("setup.txt"))
        }]\n  teardown: ['echo "teardown on $(cat /proc/sys/kernel/hostname) as $(id -u)"']` +
        `\nquality_gates:\n  - name: runs-boxed\n    command: ${JSON.stringify(boxedGate)}\n` +
        "    timeout_s: 60\n",
    });
    const result = await runPlan({ root: dir.path, ...quiet });
    assert.equal(result.status, "completed", result.problems.join("; "));
    const read = (f: string) => Deno.readTextFile(join(dir.path, f));
    assert.equal(await read("hello.txt"), "hello from a container\n");
    assert.equal((await read("limit.txt")).trim(), String(256 * 1024 * 1024));
    assert.notEqual((await read("uid.txt")).trim(), "0", "the agent is not root");
    assert.equal((await read("pids.txt")).trim(), "4096", "and its processes are limited");
    const [where, setupUid, nets] = (await read("setup.txt")).split("\n");
    assert.notEqual(where, Deno.hostname(), "phase 1 (setup) ran in a container");
    assert.notEqual(setupUid, "0", "as the same non-root user");
    assert.match(nets, /^(?!lo $).+/, `setup_network: true gives phase 1 a network: ${nets}`);
    assert.match(nets, /\blo\b/);
    assert.match(await sh(dir.path, "log", "--format=%s"), /the agent commits inside/);
    const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
    const claim = rows.find((r) => r.type === "task_claimed")!;
    assert.match(String(claim.data.isolation), /^container:(podman|docker):[0-9a-f]{64}$/);
    const bundle = JSON.parse(
      await read(`.sdd/runs/${result.runId}/evidence/${claim.data.task_id}/bundle.json`),
    );
    assert.equal(bundle.isolation, claim.data.isolation, "the sealed evidence says where it ran");
    const log = await Deno.readTextFile(
      join(dir.path, ".sdd/runs", result.runId, "logs", `${claim.data.session_id}.log`),
    );
    assert.match(log, /agent runs in container .* memory 256 MB, 1 CPUs\); network restricted/);
    const teardown = /teardown on (\S+) as (\d+)/.exec(log);
    assert.ok(teardown, "the teardown ran and its output is in the kept log");
    assert.notEqual(teardown[1], Deno.hostname(), "the teardown ran in a container");
    assert.notEqual(teardown[2], "0");
    assert.deepEqual(await containersOf(dir.path), [], "no container is left");
    assert.deepEqual(await foreignFiles(dir.path), [], "everything is the service's user's again");
    assert.equal((await sh(dir.path, "status", "--porcelain")).trim(), "");
    assert.match(await sh(dir.path, "fsck", "--strict"), /^$/);
  },
});

Deno.test({
  name: "container: the restricted agent reaches the task server and allow_hosts, never another " +
    "loopback port of the host, the internet or a name not listed; setup_network: false gives " +
    "phase 1 no network",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const secret = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const allowed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const accepted = { secret: 0, allowed: 0 };
    const count = async (l: Deno.Listener, key: keyof typeof accepted) => {
      for await (const c of l) {
        accepted[key]++;
        c.close();
      }
    };
    const serving = [count(secret, "secret"), count(allowed, "allowed")];
    const probes = [
      ["127.0.0.1", (secret.addr as Deno.NetAddr).port],
      ["127.0.0.1", (allowed.addr as Deno.NetAddr).port],
      ["1.1.1.1", 80],
      ["example.com", 443],
    ];
    const probe = `for (const [h, p] of ${JSON.stringify(probes)}) { try { ` +
      "const c = await Deno.connect({ hostname: h, port: p }); c.close(); " +
      "console.log(`reached ${h}:${p}`); } catch { console.log(`blocked ${h}:${p}`); } }";
    await Deno.writeTextFile(join(dir.path, "probe.ts"), probe + "\n");
    await containerWorkspace(
      dir.path,
      [{ id: "net", script: [["run", "deno run -A probe.ts > net.txt"], ["report", "probed"]] }],
      {
        top: `memory_mb: 256\ncpu_cores: 1\nworktree:\n  setup: [${
          JSON.stringify(setupProbe("setup.txt"))
        }]\n`,
        container: `  setup_network: false\n  allow_hosts: ["127.0.0.1:${
          (allowed.addr as Deno.NetAddr).port
        }"]\n`,
      },
    );
    try {
      const result = await runPlan({ root: dir.path, ...quiet });
      assert.equal(result.status, "completed", "the report went through the relay");
      const net = await Deno.readTextFile(join(dir.path, "net.txt"));
      const [s, a] = probes.map((p) => `${p[0]}:${p[1]}`);
      assert.match(net, new RegExp(`blocked ${s}\n`), net);
      assert.match(net, new RegExp(`reached ${a}\n`), net);
      assert.match(net, /blocked 1\.1\.1\.1:80\n/);
      assert.match(net, /blocked example\.com:443\n/);
      const [where, , nets] = (await Deno.readTextFile(join(dir.path, "setup.txt"))).split("\n");
      assert.notEqual(where, Deno.hostname(), "phase 1 ran in a container");
      assert.equal(nets, "lo ", "setup_network: false: phase 1 has no network but loopback");
      assert.equal(accepted.secret, 0, "the port not allowed saw no connection");
      assert.ok(accepted.allowed >= 1, "the allowed port was reached through the relay");
    } finally {
      secret.close();
      allowed.close();
      await Promise.allSettled(serving);
    }
  },
});

Deno.test("container: no runtime on PATH is a ContainerError before run_started; nothing is spawned; doctor, a detached run's terminal and status say the same", async () => {
  await using dir = await tempDir();
  await containerWorkspace(dir.path, [{ id: "t", script: [["report"]] }]);
  await using bin = await tempDir("service-path-");
  const git = new TextDecoder().decode(
    (await new Deno.Command("sh", { args: ["-c", "command -v git"], stdout: "piped" }).output())
      .stdout,
  ).trim();
  await Deno.symlink(git, join(bin.path, "git")); // git and sh, and no container runtime
  await Deno.symlink("/bin/sh", join(bin.path, "sh"));
  // The run and doctor are child processes with that PATH: the test process's own PATH is
  // shared by every test module `deno test --parallel` runs beside this one (see
  // tests/process_env_test.ts), so it is never changed here.
  const cli = async (...args: string[]) => {
    const o = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "--root", dir.path, ...args],
      env: { PATH: bin.path, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(o.stdout) + new TextDecoder().decode(o.stderr);
    return { code: o.code, text, stdout: new TextDecoder().decode(o.stdout) };
  };
  const run = await cli("run", "--port", "0");
  assert.notEqual(run.code, 0, run.text);
  assert.match(run.text, /ContainerError: .*podman or docker is not on PATH/);
  assert.match(run.text, /fix: install podman/);
  for (const state of [".sdd/runs", ".sdd/worktrees", ".sdd/runtime/pids"]) {
    const entries = await Array.fromAsync(Deno.readDir(join(dir.path, state))).catch(() => []);
    assert.deepEqual(entries, [], `${state} is empty: nothing ran`);
  }
  const doctor = JSON.parse((await cli("doctor", "--json")).stdout) as {
    checks?: { name: string; ok: boolean; detail: string; fix?: string }[];
  } | { name: string; ok: boolean; detail: string; fix?: string }[];
  const checks = Array.isArray(doctor) ? doctor : doctor.checks ?? [];
  const check = checks.find((c) => c.name.startsWith("isolation"))!;
  assert.equal(check.ok, false);
  assert.match(check.detail, /^ContainerError: .*podman or docker is not on PATH/);
  assert.match(check.fix ?? "", /install podman/);
  // The terminal of a detached run, and `status` afterwards, say it too.
  const detached = (await cli("run", "--detach", "--port", "0")).text;
  assert.match(detached, /exited at once[\s\S]*ContainerError: .*podman or docker is not on PATH/);
  assert.match(detached, /fix: install podman/);
  const status = (await cli("status")).text;
  assert.match(
    status,
    /last run did not start \(.*\): ContainerError: .*not on PATH; fix: install podman/,
  );
});

Deno.test({
  name:
    "container: a runtime that does not answer, a missing image and limits it refuses are each " +
    "a ContainerError naming it, before run_started",
  ignore,
  async fn() {
    await using fake = await tempDir("service-fake-podman-");
    await Deno.writeTextFile(
      join(fake.path, "podman"),
      "#!/bin/sh\necho 'Error: unable to connect to Podman socket: connection refused' >&2\nexit 125\n",
    );
    await Deno.chmod(join(fake.path, "podman"), 0o755);
    const cases: [string, Isolated, Record<string, string>, RegExp][] = [
      [
        "runtime_not_answering",
        { container: "  runtime: podman\n" },
        { PATH: `${fake.path}:${Deno.env.get("PATH")}` },
        /unable to connect to Podman socket/,
      ],
      ["image_missing", { image: "localhost/service-no-such-image:1" }, {}, /is not in/],
    ];
    if (image.ok && image.runtime === "podman") {
      // Limits above the host's hard limits are refused (a containers.conf of its own).
      await Deno.writeTextFile(
        join(fake.path, "containers.conf"),
        '[containers]\ndefault_ulimits = ["nproc=4194304:4194304"]\n[engine]\nruntime = "runc"\n',
      );
      cases.push([
        "limits_refused",
        {},
        { CONTAINERS_CONF: join(fake.path, "containers.conf") },
        /refused the container's limits \(memory_mb: 256, cpu_cores: 1\): .*rlimit/,
      ]);
    }
    for (const [kind, isolated, env, message] of cases) {
      await using dir = await tempDir();
      await containerWorkspace(dir.path, [{ id: "t", script: [["report"]] }], isolated);
      // (the runtime is found on this run's PATH, its configuration in CONTAINERS_CONF)
      const err = await runPlan({ root: dir.path, ...quiet, env: runEnv(env) }).then(
        () => assert.fail(`${kind}: the run must not start`),
        (e) => e,
      );
      assert.ok(err instanceof ContainerError, `${kind}: ${err}`);
      assert.equal(err.kind, kind, err.message);
      assert.match(err.message, message);
      assert.ok(err.fix.length > 10, "it names the fix");
      const runs = await Array.fromAsync(Deno.readDir(join(dir.path, ".sdd/runs"))).catch(() => []);
      assert.deepEqual(runs, [], `${kind}: no run_started`);
    }
  },
});

Deno.test({
  name: "container: an agent past its timeout is stopped (SIGTERM, grace, SIGKILL); no container " +
    "is left, its work is kept and the next attempt continues it",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const env = runEnv({ SERVICE_AGENT_TIMEOUT_S: "3", SERVICE_KILL_GRACE_S: "1" });
    await containerWorkspace(dir.path, [{
      id: "stuck",
      script: [
        ["if_missing", "wip.txt", [["write", "wip.txt", "kept\n"], ["hang"]]],
        ["require_prompt", "EARLIER WORK:"],
        ["report", "finished the kept work"],
      ],
    }]);
    const result = await runPlan({ root: dir.path, ...quiet, env });
    assert.equal(result.status, "completed", result.problems.join("; "));
    assert.equal(await Deno.readTextFile(join(dir.path, "wip.txt")), "kept\n");
    const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
    const exits = rows.filter((r) => r.type === "agent_exited").map((r) => r.data.exit_code);
    assert.equal(exits[0], 124, "the first attempt timed out");
    assert.deepEqual(await containersOf(dir.path), [], "no container is left");
    assert.deepEqual(await foreignFiles(dir.path), []);
  },
});

Deno.test({
  name: "container: SIGKILL of the orchestrator leaves no container behind; the next run brings " +
    "the container's work back and lands it",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await containerWorkspace(dir.path, [{
      id: "long",
      script: [
        ["if_missing", "wip.txt", [
          ["write", "wip.txt", "half\n"],
          ["run", "git add wip.txt && git commit -q -m 'half done'"],
          ["print", "committed half"],
          ["hang"],
        ]],
        ["write", "done.txt", "whole\n"],
        ["report", "done"],
      ],
    }]);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "--root", dir.path, "run", "--port", "0"],
      env: { NO_COLOR: "1" },
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      await until("the agent's half-done commit", () => aLogSays(dir.path, "committed half"));
      assert.equal((await containersOf(dir.path)).length, 1);
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
    await until(
      "no container left",
      async () => (await containersOf(dir.path)).length === 0,
      30_000,
    );
    const result = await runPlan({ root: dir.path, ...quiet });
    assert.equal(result.status, "completed", result.problems.join("; "));
    assert.equal(await Deno.readTextFile(join(dir.path, "wip.txt")), "half\n");
    assert.equal(await Deno.readTextFile(join(dir.path, "done.txt")), "whole\n");
    assert.match(
      await sh(dir.path, "log", "--format=%s"),
      /half done/,
      "the commit made inside landed",
    );
    assert.deepEqual(await containersOf(dir.path), []);
    assert.deepEqual(await foreignFiles(dir.path), []);
  },
});

Deno.test({
  name: "container: auto_build_image builds the generated Containerfile once, tagged by the " +
    "hash of its text, and the next run reuses it",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const nonce = crypto.randomUUID().slice(0, 8); // a recipe of its own: built by this test
    await containerWorkspace(dir.path, [{ id: "t", script: [["report", "built and ran"]] }], {
      image: "localhost/service-test-auto",
      top: "memory_mb: 256\ncpu_cores: 1\nauto_build_image: true\n",
      container: `  base_image: ${image.ok ? image.base : "none"}\n  install:\n` +
        `    - mkdir -p /opt/service && echo ${nonce} > /opt/service/marker\n`,
    });
    // The agent comes with the repository: the base image has deno, git and socat only.
    const yaml = join(dir.path, "service.yaml");
    await Deno.writeTextFile(
      yaml,
      (await Deno.readTextFile(yaml)).replace(IMAGE_AGENT, "./agent.ts"),
    );
    await Deno.copyFile(
      new URL("../agents/scripted_agent.ts", import.meta.url),
      join(dir.path, "agent.ts"),
    );
    await sh(dir.path, "add", "-A");
    await sh(dir.path, "commit", "-q", "-m", "the agent");
    const lines: string[] = [];
    const out = (line: string) => lines.push(line);
    let built: string | undefined;
    try {
      const first = await runPlan({ root: dir.path, ...quiet, out });
      assert.equal(first.status, "completed", first.problems.join("; "));
      const said = lines.find((l) => l.startsWith("agents run in containers:"));
      assert.match(
        said ?? "",
        /image localhost\/service-test-auto:[0-9a-f]{16} \([0-9a-f]{12}, built now\)/,
      );
      built = said!.match(/localhost\/service-test-auto:[0-9a-f]{16}/)![0];
      const marker = await runtimeCall(image.ok ? image.bin : "", [
        "run",
        "--rm",
        built,
        "cat",
        "/opt/service/marker",
      ]);
      assert.equal(marker.stdout.trim(), nonce, "container.install ran in the build");
      lines.length = 0;
      await Deno.writeTextFile(
        join(dir.path, "plan.yaml"),
        planYaml([{ name: "again", steps: [{ id: "u", script: [["report", "again"]] }] }]),
      );
      await sh(dir.path, "commit", "-q", "-am", "a second plan");
      const second = await runPlan({ root: dir.path, ...quiet, out });
      assert.equal(second.status, "completed", second.problems.join("; "));
      const again = lines.find((l) => l.startsWith("agents run in containers:")) ?? "";
      assert.ok(again.includes(`image ${built} (`), again);
      assert.doesNotMatch(again, /built now/, "the same recipe is not built twice");
    } finally {
      if (built && image.ok) await runtimeCall(image.bin, ["rmi", "--force", built]);
    }
  },
});

Deno.test({
  name: "container: a stop (Ctrl-C) ends the agent's container (SIGTERM, grace, SIGKILL), leaves " +
    "none behind, keeps its work and consumes no attempt",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const env = runEnv({ SERVICE_KILL_GRACE_S: "1" });
    await containerWorkspace(dir.path, [{
      id: "forever",
      script: [["write", "wip.txt", "kept\n"], ["print", "working"], ["hang"]],
    }]);
    const stop = new AbortController();
    const running = runPlan({ root: dir.path, ...quiet, env, signal: stop.signal });
    await until(
      "the agent's container runs",
      async () => (await containersOf(dir.path)).length > 0,
    );
    await until("the agent works", () => aLogSays(dir.path, "working"));
    stop.abort();
    const result = await running;
    assert.equal(result.status, "stopped");
    assert.deepEqual(await containersOf(dir.path), [], "no container is left");
    const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
    const exited = rows.find((r) => r.type === "agent_exited")!;
    assert.equal(exited.data.ended_by, "stop");
    const tree = rows.find((r) => r.type === "task_claimed")!.data.session_id as string;
    assert.equal(
      await Deno.readTextFile(join(dir.path, ".sdd/worktrees", tree, "wip.txt")),
      "kept\n",
      "its work is kept in its worktree",
    );
    assert.deepEqual(await foreignFiles(dir.path), [], "everything is the service's user's again");
  },
});

Deno.test({
  name: "container: a gate runs in a container of the agent image with no network; a command " +
    "the image lacks says so and names the fix",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await containerWorkspace(dir.path, [{ id: "t", script: [["report"]] }]);
    const config = ServiceConfigSchema.parse({
      cli: "generic",
      roles: { backend: {} },
      isolation: "container",
      container: { image: ref },
    });
    const iso = await probeIsolation({
      settings: containerSettings(config),
      env: Deno.env.toObject(),
      binary: "sh",
    });
    const commit = (await sh(dir.path, "rev-parse", "HEAD")).trim();
    const result = await evaluateGates(dir.path, commit, {
      quality_gates: [
        {
          name: "offline",
          command: 'test "$(tail -n +3 /proc/net/dev | wc -l)" = 1',
          timeout_s: 30,
        },
        { name: "tool", command: "no-such-tool --version", timeout_s: 30 },
      ],
      runIn: (tree) =>
        treeContainer(iso, {
          root: dir.path,
          tree,
          runId: "r",
          phase: "gate",
          network: "none",
          processEnv: Deno.env.toObject(),
          runtimeDir: join(dir.path, ".sdd/runtime"),
        }),
    });
    const [offline, tool] = result.signals;
    assert.equal(offline.passed, true, `only loopback inside: ${offline.output_tail}`);
    assert.equal(tool.exit_code, 127);
    assert.match(tool.output_tail, /not found in the agent image: .* add the command to the image/);
    assert.deepEqual(await containersOf(dir.path), [], "no container is left");
    assert.deepEqual(await foreignFiles(dir.path), []);
  },
});
