import assert from "node:assert/strict";
import { join } from "node:path";
import { hostLauncher } from "./launcher.ts";
import { spawnNewSession } from "./new_session.ts";
import { startTicks } from "./tree.ts";
import { spawnTether, tetherPid, tiedGroups } from "./tether.ts";
import { processAlive } from "../util/process_alive.ts";
import {
  killProcessesWith,
  mkfifo,
  processesWith,
  settlesWithin,
  tethersOf,
  uniqueSleep,
} from "./_test_processes.ts";

const linux = Deno.build.os === "linux";
const launcherUrl = new URL("./launcher.ts", import.meta.url).href;
const tetherUrl = new URL("./tether.ts", import.meta.url).href;

/**
 * A "service": a Deno process that starts `script` through the host launcher (with `fifo` as the
 * script's `$1`), prints the program's pid and its tether's once the tether has the tree's line,
 * prints `exited` once the program has exited and the tether has the line releasing it, and then
 * waits to be killed.
 */
function serviceSource(script: string): string {
  return `import { hostLauncher } from ${JSON.stringify(launcherUrl)};
import { tetherPid, tetherWritten } from ${JSON.stringify(tetherUrl)};
const l = hostLauncher.launch(["sh", "-c", ${JSON.stringify(script)}, "agent", Deno.args[0]], {});
await tetherWritten();
console.log(l.child.pid, tetherPid());
l.child.status.then(tetherWritten).then(() => console.log("exited"));
await new Promise(() => {});
`;
}

/** The first `n` lines of `stream` (its lock is released after). */
async function firstLines(stream: ReadableStream<Uint8Array>, n: number): Promise<string[]> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (text.split("\n").length <= n) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text.split("\n").slice(0, n);
}

/** Resolves true when every writer of the FIFO opened as `reader` is gone, false after `ms`. */
async function writersGone(reader: Deno.FsFile, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      new Response(reader.readable).text().then(() => true),
      new Promise<false>((r) => timer = setTimeout(() => r(false), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether `pid` (not a child of this process: its parent was killed) is gone within `ms`. Nothing
 * here can wait on another process's exit: /proc is looked at every 20 ms.
 */
async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (processAlive(pid)) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** Whether `child` is still running `ms` after it was asked (it is this process's child). */
async function stillRunning(child: Deno.ChildProcess, ms: number): Promise<boolean> {
  return !(await settlesWithin(child.status, ms));
}

Deno.test({
  name:
    "a service killed with SIGKILL leaves nothing of its tree running: its group and a setsid'd descendant end with it",
  ignore: !linux,
  async fn() {
    const dir = await Deno.makeTempDir();
    const sleep = uniqueSleep();
    try {
      const fifo = join(dir, "alive");
      await mkfifo(fifo);
      await Deno.writeTextFile(
        join(dir, "service.ts"),
        // Both sleeps hold the FIFO open for writing: its reader sees its end once both are gone.
        serviceSource(`exec 3>"$1"; (setsid sleep ${sleep} &); sleep ${sleep}`),
      );
      const service = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", join(dir, "service.ts"), fifo],
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      // Opening for reading waits for the agent's writer: it runs from here on.
      const alive = await Deno.open(fifo, { read: true });
      const [pid] = (await firstLines(service.stdout, 1))[0].split(" ").map(Number);
      assert.equal(processAlive(pid), true);
      service.kill("SIGKILL");
      await service.status;
      await service.stdout.cancel();
      // The end of the FIFO's input: every process that held it (the agent's group and the
      // setsid'd sleep, which left that group) has exited.
      assert.ok(
        await writersGone(alive, 15_000),
        "the agent's tree outlived the service killed with SIGKILL",
      );
      assert.equal(processAlive(pid), false);
    } finally {
      killProcessesWith(sleep); // what a failed run left
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a tree whose program exited on its own is never signalled by the tether: what it left runs on after the service is killed",
  ignore: !linux,
  async fn() {
    const dir = await Deno.makeTempDir();
    const sleep = uniqueSleep();
    try {
      await Deno.writeTextFile(
        join(dir, "service.ts"),
        // One sleep stays in the program's group (its id is then not free), one left it.
        serviceSource(`(sleep ${sleep} &); (setsid sleep ${sleep} &); exit 0`),
      );
      const service = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", join(dir, "service.ts"), "-"],
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      const [started, exited] = await firstLines(service.stdout, 2);
      const tether = Number(started.split(" ")[1]);
      assert.equal(exited, "exited");
      assert.ok(processAlive(tether), "the service has a tether");
      service.kill("SIGKILL");
      await service.status;
      await service.stdout.cancel();
      assert.ok(await goneWithin(tether, 15_000), "the tether exited with the service");
      assert.equal(processesWith(sleep).length, 2, "what the program left was not signalled");
    } finally {
      killProcessesWith(sleep);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a service that ends its work exits by itself, with no tether left, also when it never ends the trees whose programs exited",
  ignore: !linux,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      // As bench/summary does: programs read to their end, some never `end`ed.
      await Deno.writeTextFile(
        join(dir, "service.ts"),
        `import { hostLauncher } from ${JSON.stringify(launcherUrl)};
import { tetherPid } from ${JSON.stringify(tetherUrl)};
const runs = [];
for (let i = 0; i < 9; i++) {
  const l = hostLauncher.launch(["sh", "-c", "echo " + i], {});
  runs.push(Promise.all([l.child.status, new Response(l.child.stdout).text(),
    new Response(l.child.stderr).text()]).then(() => i % 2 ? l.end(100, false) : undefined));
}
console.log(tetherPid());
await Promise.all(runs);
`,
      );
      const service = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", join(dir, "service.ts")],
        stdout: "piped",
        stderr: "inherit",
        signal: AbortSignal.timeout(60_000),
      }).spawn();
      const tether = Number((await firstLines(service.stdout, 1))[0]);
      assert.ok(tether > 0, "the service had a tether");
      const status = await service.status;
      await service.stdout.cancel();
      assert.equal(status.signal, null, "the service exited by itself");
      assert.equal(status.code, 0);
      assert.ok(await goneWithin(tether, 5_000), "no tether is left after the service's exit");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "one tether serves every tree of a process; a tree is forgotten once its program has exited, without `end`",
  ignore: !linux,
  async fn() {
    // `deno test --parallel` runs other test modules in this same process, each with its own
    // copy of the tether module (and so its own tether): count this module's, by the pid each
    // launch was tied through, not the process's.
    const servedBy = new Set<number | undefined>();
    const trees = Array.from({ length: 4 }, () => {
      const launched = hostLauncher.launch(["sleep", uniqueSleep()], {});
      servedBy.add(tetherPid());
      return launched;
    });
    try {
      for (const l of trees) assert.ok(tiedGroups().includes(l.child.pid));
      assert.deepEqual([...servedBy], [tetherPid()], "one tether served every launch");
      assert.ok(tethersOf(Deno.pid).includes(tetherPid()!), "it is this process's");
    } finally {
      for (const l of trees) {
        l.child.kill("SIGKILL");
        await Promise.all([l.child.status, l.child.stdout.cancel(), l.child.stderr.cancel()]);
        assert.ok(!tiedGroups().includes(l.child.pid), "its exit released it");
      }
    }
  },
});

Deno.test({
  name:
    "at its input's end a tether signals the listed trees only: a released tree and a group whose leader is another process are spared",
  ignore: !linux,
  async fn() {
    const sleep = (marker?: string) =>
      spawnNewSession(["sleep", uniqueSleep()], {
        env: marker ? { [marker]: "1" } : {},
        stdout: "null",
        stderr: "null",
      });
    const listed = sleep();
    const reused = sleep(); // its pgid listed with another start time: a reused id
    const released = sleep();
    const marker = `SERVICE_TREE_${crypto.randomUUID().replaceAll("-", "")}`;
    const marked = sleep(marker); // as a descendant that called setsid: found by its marker
    const tether = spawnTether();
    const input = tether.stdin.getWriter();
    try {
      await input.write(new TextEncoder().encode([
        `+ ${listed.pid} ${startTicks(listed.pid)} -`,
        `+ ${reused.pid} ${startTicks(reused.pid)! + 1} -`,
        `+ ${released.pid} ${startTicks(released.pid)} -`,
        `+ 999999999 - ${marker}`, // no such group: only the marker finds it
        `- ${released.pid}`,
        "",
      ].join("\n")));
      await input.close();
      assert.equal((await tether.status).code, 0);
      assert.equal((await listed.status).signal, "SIGTERM");
      assert.equal((await marked.status).signal, "SIGTERM");
      assert.ok(await stillRunning(reused, 100), "a reused group id was signalled");
      assert.ok(await stillRunning(released, 100), "a released tree was signalled");
    } finally {
      for (const c of [listed, reused, released, marked]) {
        try {
          c.kill("SIGKILL");
        } catch { /* ended */ }
        await c.status;
      }
    }
  },
});

Deno.test({
  name: "a tether whose input ends with no tree listed exits at once",
  ignore: !linux,
  async fn() {
    const tether = spawnTether();
    await tether.stdin.close();
    const started = performance.now();
    assert.equal((await tether.status).code, 0);
    assert.ok(performance.now() - started < 900, "it did not wait the orphans' grace");
  },
});
