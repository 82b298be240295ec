import assert from "node:assert/strict";
import { hostLauncher } from "./launcher.ts";
import { treeScanCounts } from "./tree.ts";
import { processAlive } from "../util/process_alive.ts";

const linux = Deno.build.os === "linux";

/** The processes alive now, other than this one. */
function pidsNow(): Set<number> {
  const out = new Set<number>();
  for (const e of Deno.readDirSync("/proc")) {
    if (/^\d+$/.test(e.name) && Number(e.name) !== Deno.pid) out.add(Number(e.name));
  }
  return out;
}

async function drain(child: Deno.ChildProcess): Promise<string> {
  const [out] = await Promise.all([new Response(child.stdout).text(), child.stderr.cancel()]);
  await child.status;
  return out;
}

Deno.test({
  name:
    "a tree's end reads the environment of no process that started before it, and still ends a setsid'd descendant",
  ignore: !linux,
  async fn() {
    const older = pidsNow(); // every one of them started before the spawn below
    const launched = hostLauncher.launch(
      ["sh", "-c", "(setsid sleep 600 >/dev/null 2>&1 & echo quiet=$!)"],
      {},
    );
    const pid = Number(/quiet=(\d+)/.exec(await drain(launched.child))![1]);
    assert.equal(processAlive(pid), true);
    const { scans, environments } = { ...treeScanCounts };
    await launched.end(2000, false);
    const scanned = treeScanCounts.scans - scans;
    const reads = treeScanCounts.environments - environments;
    assert.equal(processAlive(pid), false, "the setsid sleep outlived its tree");
    const now = pidsNow();
    const olderAlive = [...now].filter((p) => older.has(p)).length;
    assert.ok(scanned > 0 && olderAlive > 10, `${scanned} scans, ${olderAlive} older processes`);
    // Each scan reads the environments of the processes started since the spawn (the sleep, and
    // whatever else the machine started meanwhile), never of the older ones.
    assert.ok(
      reads < scanned * olderAlive / 2,
      `${reads} environments read in ${scanned} scans; ${olderAlive} older processes, ` +
        `${now.size - olderAlive} newer`,
    );
  },
});
