import assert from "node:assert/strict";
import { join } from "node:path";
import { makeSocketDir, socketDirOwner, sweepSocketDirs } from "./socket_dir.ts";

Deno.test("socketDirOwner() reads the pid of service-http-<pid>-<random> only", () => {
  assert.equal(socketDirOwner("service-http-4242-a1B2c3"), 4242);
  for (
    const name of ["service-http-a1B2c3", "service-http-12-", "other-12-ab", "service-http-1-a/b"]
  ) {
    assert.equal(socketDirOwner(name), undefined, name);
  }
});

Deno.test("a server killed with SIGKILL leaves its socket directory; the next server's start removes it, never a live one's", async () => {
  const parent = await Deno.makeTempDir({ prefix: "socket-dirs-" });
  try {
    // A process that is gone: a child that ran and was collected.
    const child = new Deno.Command("true").spawn();
    await child.status;
    const dead = join(parent, `service-http-${child.pid}-deadbe`);
    await Deno.mkdir(dead);
    await Deno.writeTextFile(join(dead, "http.sock"), "");
    const live = join(parent, `service-http-${Deno.pid}-livexy`);
    await Deno.mkdir(live);
    const foreign = join(parent, "service-http-notmine");
    await Deno.mkdir(foreign);

    const mine = await makeSocketDir(parent);
    assert.match(mine, new RegExp(`service-http-${Deno.pid}-`));
    assert.equal((await Deno.stat(mine)).mode! & 0o777, 0o700);
    const left = (await Array.fromAsync(Deno.readDir(parent))).map((e) => e.name).sort();
    assert.ok(!left.includes(`service-http-${child.pid}-deadbe`), "the dead owner's is removed");
    assert.ok(left.includes(`service-http-${Deno.pid}-livexy`), "a live owner's stays");
    assert.ok(left.includes("service-http-notmine"), "a name without an owner is not ours");
    assert.deepEqual(await sweepSocketDirs(parent), []);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
