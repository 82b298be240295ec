/**
 * A hostile agent against the git boundary (docs/security.md, "The git boundary"): each test is
 * one trick of tests/_hostile_git.ts, played by a real agent in a real container (podman, the
 * image of tests/_container_image.ts) — or by a host-process agent, or from a gate's or a
 * teardown's container — against real git on the host. Every command a trick plants appends to
 * `<sentinel>/ran`, a host directory no container sees: the file must never appear, no host
 * file may change, and the agent's honest work must still land. The tests that need a runtime
 * skip, loudly, only where none answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { ServiceConfigSchema } from "../lib/config/schema.ts";
import { containerSettings } from "../lib/container/settings.ts";
import { type ContainerIsolation, probeIsolation } from "../lib/container/probe.ts";
import { treeContainer } from "../lib/container/tree_runner.ts";
import { evaluateGates } from "../lib/merge/gates.ts";
import { runShell } from "../lib/process/shell.ts";
import { createWorktree } from "../lib/worktrees/worktrees.ts";
import { cleanHead, commitPartialWork } from "../lib/worktrees/worktrees.ts";
import { DEFAULT_IGNORES, writeWorktreeIgnores } from "../lib/worktrees/ignores.ts";
import { AGENT, journalOf, planYaml, sh, type Step } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { IMAGE_AGENT, skipping, testImage } from "./_container_image.ts";
import type { Bait } from "./_hostile_git.ts";

const image = await testImage();
const ignore = skipping(image);
const ref = image.ok ? image.ref : "localhost/none:0";
const quiet = { out: () => {}, port: 0, app: SERVER_APP };
const HOSTILE = new URL("./_hostile_git.ts", import.meta.url);

/** The agent's directive that plays `trick` in its worktree. */
function play(trick: string, bait: Bait): unknown[] {
  return ["run", `deno run -A hostile_git.ts ${trick} '${JSON.stringify(bait)}'`];
}

/** What a test's workspace says beyond the scripted agent. */
interface Hostile {
  /** `isolation: container` in the test image (default), or host processes. */
  container?: boolean;
  /** More top-level service.yaml lines. */
  top?: string;
}

/** A repository with the trick script committed, whose agents run as `o` says. */
async function hostileWorkspace(dir: string, steps: Step[], o: Hostile = {}): Promise<void> {
  await sh(dir, "init", "-q", "-b", "main");
  await sh(dir, "config", "user.email", "e2e@localhost");
  await sh(dir, "config", "user.name", "e2e");
  await Deno.writeTextFile(join(dir, "README.md"), "# hostile\n");
  await Deno.copyFile(HOSTILE, join(dir, "hostile_git.ts"));
  const agent = o.container === false ? AGENT : IMAGE_AGENT;
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", agent])}\n` +
      `roles:\n  backend: {}\n` +
      (o.container === false
        ? ""
        : `isolation: container\nmemory_mb: 256\ncpu_cores: 1\ncontainer:\n  image: ${ref}\n`) +
      (o.top ?? ""),
  );
  await Deno.writeTextFile(join(dir, "plan.yaml"), planYaml([{ name: "s", steps }]));
  await sh(dir, "add", "-A");
  await sh(dir, "commit", "-q", "-m", "init");
}

/** A host directory for the planted commands' traces (never mounted into a container). */
async function sentinel(): Promise<AsyncDisposable & { path: string; ran(): Promise<string> }> {
  const dir = await tempDir("service-sentinel-");
  return {
    path: dir.path,
    ran: () => Deno.readTextFile(join(dir.path, "ran")).catch(() => ""),
    [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose](),
  };
}

/** Run the plan; it completes (within two minutes) and its one task's work lands on main. */
async function runToLanding(dir: string, file: string, text: string): Promise<string> {
  const result = await runPlan({ root: dir, ...quiet, signal: AbortSignal.timeout(120_000) });
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(await sh(dir, "show", `main:${file}`), text, "the agent's honest work landed");
  return result.runId;
}

/** `git worktree list` of the repository: the paths and branches every landing reads. */
async function listedCheckouts(dir: string): Promise<string[]> {
  const out = await sh(dir, "worktree", "list", "--porcelain");
  return out.split("\n\n").filter(Boolean).map((block) => {
    const path = /^worktree (.*)$/m.exec(block)?.[1];
    const branch = /^branch (.*)$/m.exec(block)?.[1] ?? "(detached)";
    return `${path} ${branch}`;
  });
}

Deno.test({
  name: "git boundary: a container that points its worktree's commondir at a git directory of " +
    "its own (fsmonitor, hooks, the real objects borrowed) makes the host run none of it; its " +
    "work lands",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await using trace = await sentinel();
    await hostileWorkspace(dir.path, [{
      id: "t",
      script: [
        ["write", "work.txt", "honest work\n"],
        ["report", "done"],
        play("commondir", { sentinel: trace.path }),
      ],
    }]);
    await runToLanding(dir.path, "work.txt", "honest work\n");
    assert.equal(await trace.ran(), "", "nothing the container planted ran on the host");
  },
});

Deno.test({
  name: "git boundary: a container that rewrites its worktree's gitdir and HEAD never shows the " +
    "host a checkout it did not make (git worktree list), and its worktree is reaped",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await using trace = await sentinel();
    await hostileWorkspace(dir.path, [{
      id: "t",
      script: [
        ["write", "work.txt", "honest work\n"],
        ["run", "git add work.txt && git commit -q -m work"],
        ["report", "done"],
        play("gitdir", { sentinel: trace.path }),
        ["sleep", 1500],
      ],
    }]);
    const seen = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const c of await listedCheckouts(dir.path).catch(() => [])) seen.add(c);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      await runToLanding(dir.path, "work.txt", "honest work\n");
    } finally {
      watching = false;
      await watcher;
    }
    const made = (c: string) =>
      c === `${dir.path} refs/heads/main` ||
      c.startsWith(join(dir.path, ".sdd/worktrees") + "/") && !c.endsWith(" refs/heads/main");
    const foreign = [...seen].filter((c) => !made(c));
    assert.deepEqual(foreign, [], "no listed checkout the service did not make");
    assert.deepEqual(await listedCheckouts(dir.path), [`${dir.path} refs/heads/main`]);
  },
});

Deno.test({
  name: "git boundary: a container that links its HEAD to the target branch's ref file cannot " +
    "make main a symbolic ref (nothing is written through a link)",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await using trace = await sentinel();
    await hostileWorkspace(dir.path, [{
      id: "t",
      script: [
        ["write", "work.txt", "honest work\n"],
        ["report", "done"],
        play("head-symlink", { sentinel: trace.path }),
      ],
    }]);
    await runToLanding(dir.path, "work.txt", "honest work\n");
    const symbolic = await new Deno.Command("git", {
      args: ["symbolic-ref", "-q", "refs/heads/main"],
      cwd: dir.path,
      stdout: "piped",
    }).output();
    assert.notEqual(symbolic.code, 0, new TextDecoder().decode(symbolic.stdout));
    assert.match(await sh(dir.path, "rev-parse", "--verify", "main"), /^[0-9a-f]{40}\n$/);
  },
});

Deno.test({
  name: "git boundary: a container that links its HEAD reflog to a host file makes the host's " +
    "commits append nothing to it",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await using trace = await sentinel();
    const victim = join(trace.path, "victim.txt");
    await Deno.writeTextFile(victim, "a host file\n");
    await hostileWorkspace(dir.path, [{
      id: "t",
      script: [
        ["write", "work.txt", "honest work\n"], // left uncommitted: the host commits it
        ["report", "done"],
        play("logs-symlink", { sentinel: trace.path, victim }),
      ],
    }]);
    await runToLanding(dir.path, "work.txt", "honest work\n");
    assert.equal(await Deno.readTextFile(victim), "a host file\n");
  },
});

Deno.test({
  name: "git boundary: an index entry that names a host file outside the worktree never brings " +
    "that file into a commit, the review diff or main",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await using trace = await sentinel();
    const victim = join(trace.path, "secret.txt");
    await Deno.writeTextFile(victim, "TOP SECRET of the host\n");
    await hostileWorkspace(dir.path, [{
      id: "t",
      script: [
        ["write", "work.txt", "honest work\n"],
        ["report", "done"],
        play("index", { sentinel: trace.path, victim }),
      ],
    }]);
    const runId = await runToLanding(dir.path, "work.txt", "honest work\n");
    const everything = await sh(dir.path, "log", "--all", "-p", "--format=%H %s");
    assert.doesNotMatch(everything, /TOP SECRET/, "no commit holds the host file");
    assert.doesNotMatch(await sh(dir.path, "ls-tree", "-r", "--name-only", "main"), /\.\./);
    const diffs = join(dir.path, ".sdd/runs", runId, "review/diffs");
    for await (const e of Deno.readDir(diffs)) {
      assert.doesNotMatch(await Deno.readTextFile(join(diffs, e.name)), /TOP SECRET|secret\.txt/);
    }
    const rows = (await journalOf(dir.path, runId)).rows.map((r) => r.row);
    assert.ok(rows.some((r) => r.type === "task_diff_captured"), "the diff was captured");
  },
});

Deno.test({
  name: "git boundary: a .gitattributes that picks the repository's own filter, diff and merge " +
    "drivers makes the host run none of them on the agent's files",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await using trace = await sentinel();
    await hostileWorkspace(dir.path, [{
      id: "t",
      script: [
        ["write", "notes.txt", "honest notes\n"], // uncommitted: the host stages it
        play("attributes", { sentinel: trace.path }),
        ["report", "done"],
      ],
    }]);
    // Drivers the repository defines for its own files (as git-lfs does): the agent's tree picks
    // them for files of its choosing.
    const run = (what: string, then: string) =>
      `sh -c 'echo ${what} >> ${trace.path}/ran; ${then}'`;
    await sh(dir.path, "config", "filter.demo.clean", run("clean", "cat"));
    await sh(dir.path, "config", "filter.demo.process", run("process", "exit 1"));
    await sh(dir.path, "config", "diff.demo.textconv", run("textconv", 'cat "$0"'));
    await sh(dir.path, "config", "merge.demo.driver", run("merge", "exit 1"));
    await runToLanding(dir.path, "notes.txt", "honest notes\n");
    assert.equal(await trace.ran(), "", "no driver ran on the host");
  },
});

Deno.test({
  name: "git boundary: a host-process agent that plants config.worktree (hooksPath, fsmonitor, a " +
    "filter) and a .gitattributes makes the service's own git run none of it",
  async fn() {
    await using dir = await tempDir();
    await using trace = await sentinel();
    await hostileWorkspace(dir.path, [{
      id: "t",
      script: [
        ["write", "work.txt", "honest work\n"], // uncommitted: the service commits it
        ["report", "done"],
        play("config-worktree", { sentinel: trace.path }),
      ],
    }], { container: false });
    await runToLanding(dir.path, "work.txt", "honest work\n");
    assert.equal(await trace.ran(), "", "nothing the agent planted ran in the service's git");
  },
});

/** The run's isolation as the orchestrator probes it. */
async function isolation(): Promise<ContainerIsolation> {
  const config = ServiceConfigSchema.parse({
    cli: "generic",
    roles: { backend: {} },
    isolation: "container",
    container: { image: ref },
  });
  return await probeIsolation({
    settings: containerSettings(config),
    env: Deno.env.toObject(),
    binary: "sh",
  });
}

Deno.test({
  name: "git boundary: a teardown's container that writes the worktree's config.worktree, " +
    "commondir and index changes nothing the host's git reads there afterwards",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await using trace = await sentinel();
    await hostileWorkspace(dir.path, [{ id: "t", script: [["report"]] }]);
    const base = (await sh(dir.path, "rev-parse", "HEAD")).trim();
    const tree = await createWorktree(dir.path, "s-teardown", base);
    await writeWorktreeIgnores(tree.path, DEFAULT_IGNORES);
    await Deno.writeTextFile(join(tree.path, "work.txt"), "honest work\n");
    const runner = await treeContainer(await isolation(), {
      root: dir.path,
      tree: tree.path,
      runId: "r",
      phase: "teardown",
      network: "none",
      processEnv: Deno.env.toObject(),
      runtimeDir: join(dir.path, ".sdd/runtime"),
    });
    try {
      const r = await runShell(
        `deno run -A hostile_git.ts config-worktree '${JSON.stringify({ sentinel: trace.path })}'`,
        { cwd: tree.path, launcher: runner.launcher, env: runner.env({}), timeoutMs: 60_000 },
      );
      assert.equal(r.code, 0, r.output_tail);
    } finally {
      await runner.release();
    }
    // What the service does in that worktree next (a reap, or a later run adopting it).
    await cleanHead(tree.path, { root: dir.path });
    const work = await commitPartialWork(tree.path, "leftovers", { root: dir.path });
    assert.equal(work.committed, true);
    assert.equal(await trace.ran(), "", "nothing the teardown planted ran on the host");
    assert.equal(await sh(tree.path, "show", "HEAD:work.txt"), "honest work\n");
  },
});

Deno.test({
  name: "git boundary: a gate's container that rewrites its tree's gitdir and HEAD leaves no " +
    "phantom checkout of the target branch behind (every later landing would wait on it)",
  ignore,
  async fn() {
    await using dir = await tempDir();
    await using trace = await sentinel();
    await hostileWorkspace(dir.path, [{ id: "t", script: [["report"]] }]);
    const iso = await isolation();
    const commit = (await sh(dir.path, "rev-parse", "HEAD")).trim();
    const result = await evaluateGates(dir.path, commit, {
      quality_gates: [{
        name: "hostile",
        command: `deno run -A hostile_git.ts gate-gitdir '${
          JSON.stringify({ sentinel: trace.path })
        }'`,
        timeout_s: 60,
      }],
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
    assert.equal(result.signals[0].exit_code, 0, result.signals[0].output_tail);
    assert.deepEqual(await listedCheckouts(dir.path), [`${dir.path} refs/heads/main`]);
    assert.equal(await trace.ran(), "");
  },
});
