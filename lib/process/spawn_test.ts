import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type ProcessHandle,
  type ProcessStatus,
  type SpawnOptions,
  spawnProcess,
} from "./spawn.ts";
import { hostLauncher, type Launcher } from "./launcher.ts";
import { processAlive } from "../util/process_alive.ts";

const linux = Deno.build.os === "linux";

/** What one case saw: its status, its handle, its lines per stream, its scratch directory. */
interface Seen {
  status: ProcessStatus;
  proc: ProcessHandle;
  lines: { stdout: string[]; stderr: string[] };
  dir: string;
}

interface Case {
  name: string;
  /** A `sh -c` script; `$DIR` is the case's scratch directory. */
  script: string;
  options?: SpawnOptions;
  /** Runs while the program runs (wait for it, end it). */
  during?: (proc: ProcessHandle, dir: string) => Promise<void>;
  expect: (seen: Seen) => void | Promise<void>;
  linuxOnly?: boolean;
}

const CASES: Case[] = [
  {
    name: "exit 0 is success, ended by nothing",
    script: "echo hello",
    expect: ({ status, proc }) => {
      assert.deepEqual(pick(status), {
        success: true,
        code: 0,
        signal: null,
        timedOut: false,
        endedBy: null,
        killed: false,
      });
      assert.deepEqual(proc.tail, ["hello"]);
      assert.equal(proc.alive, false);
      assert.equal(proc.outputBytes, 6);
      assert.ok(proc.lastOutputAt !== null);
    },
  },
  {
    name: "exit 3 is reported with the line that says what went wrong",
    script: "echo starting; echo 'Error: ANTHROPIC_API_KEY is not set' >&2; echo bye; exit 3",
    expect: ({ status, proc }) => {
      assert.equal(status.success, false);
      assert.equal(status.code, 3);
      assert.equal(status.signal, null);
      assert.equal(proc.lastErrorLine, "Error: ANTHROPIC_API_KEY is not set");
    },
  },
  {
    name: "a program killed by a signal reports the signal, and no one ended it",
    script: "echo x; kill -TERM $$; sleep 5",
    expect: ({ status }) => {
      assert.equal(status.signal, "SIGTERM");
      assert.equal(status.code, 143);
      assert.equal(status.endedBy, null);
      assert.equal(status.killed, false);
    },
  },
  {
    name: "end(reason) stops at SIGTERM when the tree obeys it",
    script: "sleep 30 & echo ready; wait",
    during: async (proc) => {
      await until(() => proc.tail.includes("ready"));
      await proc.end("stop");
    },
    expect: ({ status }) => {
      assert.equal(status.signal, "SIGTERM");
      assert.equal(status.endedBy, "stop");
      assert.equal(status.timedOut, false);
      assert.equal(status.killed, false);
    },
  },
  {
    name: "a timeout with a child ignoring SIGTERM ends in SIGKILL after the grace",
    script:
      `trap '' TERM; sh -c 'echo grandchild $$; while :; do sleep 0.1; done' & while :; do sleep 0.1; done`,
    options: { timeoutMs: 200, graceMs: 300 },
    expect: ({ status, proc }) => {
      assert.equal(status.timedOut, true);
      assert.equal(status.endedBy, "timeout");
      assert.equal(status.killed, true);
      assert.equal(status.signal, "SIGKILL");
      assert.ok(status.durationMs >= 500, `took ${status.durationMs} ms`);
      const grandchild = Number(/grandchild (\d+)/.exec(proc.tail.join("\n"))![1]);
      assert.equal(processAlive(grandchild), false, "the grandchild outlived the timeout");
    },
  },
  {
    name: "the AbortSignal ends it with reason abort",
    script: "sleep 30",
    get options() {
      return { signal: AbortSignal.timeout(100) }; // made when the case runs
    },
    expect: ({ status }) => {
      assert.equal(status.endedBy, "abort");
      assert.equal(status.timedOut, false);
      assert.equal(status.signal, "SIGTERM");
    },
  },
  {
    name: "a descendant that called setsid ends with it, holding its output or not",
    script:
      "setsid sleep 600 & echo held=$!; (setsid sleep 600 >/dev/null 2>&1 & echo quiet=$!); echo done",
    options: { graceMs: 200 },
    linuxOnly: true,
    expect: ({ status, proc }) => {
      assert.equal(status.code, 0);
      assert.equal(status.endedBy, null);
      assert.ok(status.durationMs < 5000, `took ${status.durationMs} ms`);
      const text = proc.tail.join("\n");
      for (const name of ["held", "quiet"]) {
        const pid = Number(new RegExp(`${name}=(\\d+)`).exec(text)![1]);
        assert.equal(processAlive(pid), false, `the ${name} setsid sleep outlived it`);
      }
    },
  },
  {
    name: "a program that closes its output but keeps running still runs until it ends",
    script: 'exec >&- 2>&-; touch "$DIR/closed"; sleep 30',
    options: { timeoutMs: 1000, graceMs: 200 },
    during: async (proc, dir) => {
      await until(() => Deno.stat(join(dir, "closed")).then(() => true, () => false));
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(proc.alive, true, "its output closed, so it was taken for ended");
    },
    expect: ({ status }) => {
      assert.equal(status.timedOut, true);
      assert.equal(status.signal, "SIGTERM");
    },
  },
  {
    name: "line callbacks join partial lines, per stream, and flush the unterminated last one",
    script:
      String.raw`printf 'ab'; sleep 0.1; printf 'c\r'; sleep 0.1; printf '\nde'; printf 'x' >&2; ` +
      String.raw`sleep 0.1; printf 'f\rg\n\nlast'; printf 'y\n' >&2`,
    expect: ({ lines, proc }) => {
      assert.deepEqual(lines.stdout, ["abc", "def", "g", "", "last"]);
      assert.deepEqual(lines.stderr, ["xy"]);
      assert.equal(proc.tail.length, 6);
    },
  },
  {
    name: "a line longer than 64 KiB arrives in pieces, not as one growing string",
    script: "head -c 150000 /dev/zero | tr '\\0' a; echo; echo end",
    expect: ({ lines }) => {
      assert.deepEqual(lines.stdout.map((l) => l.length), [65536, 65536, 18928, 3]);
    },
  },
  {
    name: "output is appended to the log file in arrival order",
    script: "echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three",
    options: { tailLines: 2 },
    expect: async ({ dir, proc }) => {
      assert.equal(await Deno.readTextFile(join(dir, "run.log")), "before\none\ntwo\nthree\n");
      assert.deepEqual(proc.tail, ["two", "three"]);
    },
  },
];

for (const c of CASES) {
  Deno.test({
    name: `spawnProcess(): ${c.name}`,
    ignore: c.linuxOnly && !linux,
    async fn() {
      const dir = await Deno.makeTempDir({ prefix: "svc-spawn-" });
      try {
        const log = join(dir, "run.log");
        await Deno.writeTextFile(log, "before\n");
        const lines = { stdout: [] as string[], stderr: [] as string[] };
        const proc = spawnProcess(["sh", "-c", c.script], {
          cwd: dir,
          env: { DIR: dir },
          logPath: log,
          onLine: (line, stream) => lines[stream].push(line),
          ...c.options,
        });
        await c.during?.(proc, dir);
        const status = await proc.status;
        await c.expect({ status, proc, lines, dir });
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

Deno.test("spawnProcess() throws NotFound for a missing program, and starts nothing", () => {
  assert.throws(() => spawnProcess(["no-such-program-xyz"]), Deno.errors.NotFound);
});

Deno.test("spawnProcess() ends the program through its launcher, as a container runner would", async () => {
  // A launcher that ends its program by name, not by process group: what `podman stop` does.
  const ended: number[] = [];
  const byName: Launcher = {
    launch(argv, options) {
      const launched = hostLauncher.launch(argv, options);
      return {
        child: launched.child,
        end: (graceMs) => {
          ended.push(graceMs);
          launched.child.kill("SIGINT");
          return Promise.resolve(false);
        },
      };
    },
  };
  const proc = spawnProcess(["sleep", "30"], { launcher: byName, graceMs: 1234 });
  const status = await proc.end("stop");
  assert.equal(status.signal, "SIGINT");
  assert.equal(status.endedBy, "stop");
  assert.equal(ended[0], 1234);
});

function pick(s: ProcessStatus) {
  const { durationMs: _, ...rest } = s;
  return rest;
}

async function until(cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("end() asked again without a grace while it ends sends SIGKILL at once, not after the grace", async () => {
  const proc = spawnProcess([
    "sh",
    "-c",
    `trap '' TERM; echo ready; while :; do sleep 0.1; done`,
  ], { graceMs: 30_000 });
  while (!proc.tail.includes("ready")) await new Promise((r) => setTimeout(r, 20));
  const started = performance.now();
  const first = proc.end("stop"); // SIGTERM, which it ignores: 30 s of grace
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(proc.alive, true, "it ignores SIGTERM");
  const second = proc.end("stop", 0);
  const status = await second;
  assert.equal(await first, status);
  const took = performance.now() - started;
  assert.ok(took < 10_000, `ended ${Math.round(took)} ms after the first end, not 30 s`);
  assert.equal(status.signal, "SIGKILL");
  assert.equal(status.killed, true);
  assert.equal(status.endedBy, "stop");
});
