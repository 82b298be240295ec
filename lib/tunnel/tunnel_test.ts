import assert from "node:assert/strict";
import { join } from "node:path";
import { startTunnel, TUNNEL_PROGRAMS } from "./tunnel.ts";
import { processAlive } from "../util/process_alive.ts";

const cloudflared = TUNNEL_PROGRAMS.find((p) => p.name === "cloudflared")!;

/** A stand-in tunnel program: `body` is its shell script. */
async function standIn(dir: string, body: string): Promise<string> {
  const path = join(dir, "cloudflared");
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

/** `p`, or undefined when it takes longer than `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<undefined>((r) => timer = setTimeout(() => r(undefined), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test({
  name:
    "startTunnel() reads the announced URL; stop() ends the tunnel and a helper that left its group",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "svc-tunnel-" });
    let helper = 0;
    try {
      const path = await standIn(
        dir,
        `trap '' TERM
setsid sleep 600 &
echo $! > ${join(dir, "helper.pid")}
printf 'INF starting\\nINF |  https://quiet-fox.trycloudflare.com  |\\n'
while :; do sleep 0.1; done`,
      );
      const tunnel = await startTunnel({ program: cloudflared, path }, 18_998, 10_000);
      assert.equal(tunnel.publicUrl, "https://quiet-fox.trycloudflare.com");
      const stopped = await within(tunnel.stop(200).then(() => true), 10_000);
      const status = await within(tunnel.exited, 100);
      helper = Number((await Deno.readTextFile(join(dir, "helper.pid"))).trim());
      const helperRan = processAlive(helper);
      assert.ok(stopped, "stop() never returned: the helper kept the tunnel's output open");
      assert.equal(status?.signal, "SIGKILL", "the tunnel ignored SIGTERM: killed after the grace");
      assert.equal(helperRan, false, "the setsid helper outlived the tunnel");
    } finally {
      if (helper && processAlive(helper)) Deno.kill(helper, "SIGKILL");
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("startTunnel() that exits before announcing a URL says so with its last output", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-tunnel-" });
  try {
    const path = await standIn(dir, "echo 'ERR failed to dial: connection refused' >&2; exit 1");
    await assert.rejects(
      startTunnel({ program: cloudflared, path }, 18_997, 10_000),
      /cloudflared exited \(code 1\) before announcing a public URL; its last output:\n {2}ERR failed to dial: connection refused/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
