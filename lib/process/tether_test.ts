import assert from "node:assert/strict";
import { join } from "node:path";
import { hostLauncher } from "./launcher.ts";
import { processAlive } from "../util/process_alive.ts";
import { killProcessesWith, uniqueSleep } from "./_test_processes.ts";

const linux = Deno.build.os === "linux";

/**
 * A "service": a Deno process that starts `script` through the host launcher (with `fifo` as
 * the script's `$1`), prints the program's pid, and then waits to be killed.
 */
function serviceSource(script: string): string {
  const launcher = new URL("./launcher.ts", import.meta.url).href;
  return `import { hostLauncher } from ${JSON.stringify(launcher)};
const fifo = Deno.args[0];
const l = hostLauncher.launch(["sh", "-c", ${JSON.stringify(script)}, "agent", fifo], {
  tetherAfterMs: 0,
});
console.log(l.child.pid);
await new Promise(() => {});
`;
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.split("\n")[0];
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
      await new Deno.Command("mkfifo", { args: [fifo] }).output();
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
      const pid = Number(await firstLine(service.stdout));
      assert.equal(processAlive(pid), true);
      service.kill("SIGKILL");
      await service.status;
      await service.stdout.cancel();
      // The end of the FIFO's input: every process that held it (the agent's group and the
      // setsid'd sleep, which left that group) has exited.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ended = await Promise.race([
        new Response(alive.readable).text().then(() => true),
        new Promise<false>((r) => timer = setTimeout(() => r(false), 15_000)),
      ]);
      clearTimeout(timer);
      assert.ok(ended, "the agent's tree outlived the service killed with SIGKILL");
      assert.equal(processAlive(pid), false);
    } finally {
      killProcessesWith(sleep); // what a failed run left
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a tree the service ended itself lets its tether go: nothing of it is left running",
  ignore: !linux,
  async fn() {
    const launched = hostLauncher.launch(["sh", "-c", "exit 3"], { tetherAfterMs: 0 });
    const [status] = await Promise.all([
      launched.child.status,
      launched.child.stdout.cancel(),
      launched.child.stderr.cancel(),
    ]);
    assert.equal(status.code, 3);
    const before = tethers();
    assert.ok(before.length > 0, "a tether watches the tree while it runs");
    await launched.end(1000, false);
    const after = tethers().filter((p) => before.includes(p));
    assert.deepEqual(after, [], "the tether exited once the tree had ended");
  },
});

/** Live tethers of this process (their command line names them). */
function tethers(): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).split("\0");
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (argv.includes("service-tether") && ppid === Deno.pid && state !== "Z") {
        out.push(Number(e.name));
      }
    } catch { /* gone meanwhile */ }
  }
  return out;
}
