import assert from "node:assert/strict";
import { join } from "node:path";
import {
  leaseHolderAlive,
  leasePorts,
  type PortLease,
  PortRangeExhaustedError,
  readLeases,
  reclaimStaleLeases,
  releasePorts,
  sessionPorts,
} from "./ports.ts";
import { processStartTicks } from "../util/process_alive.ts";

/** No port is taken by another program (these tables bind nothing). */
const ALL_FREE = { isFree: () => true };

async function leaseDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "ports-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

async function writeLease(dir: string, lease: PortLease | string): Promise<void> {
  const port = typeof lease === "string" ? 20_000 : lease.port;
  await Deno.writeTextFile(
    join(dir, `${port}.json`),
    typeof lease === "string" ? lease : JSON.stringify(lease),
  );
}

Deno.test("leasePorts(): concurrent leases of many sessions get distinct ports, lowest first, each file naming its session", async () => {
  await using dir = await leaseDir();
  const sessions = Array.from({ length: 8 }, (_, i) => `s-${i}`);
  const got = await Promise.all(
    sessions.map((s) => leasePorts(dir.path, s, 2, [20000, 20099], ALL_FREE)),
  );
  const all = got.flat();
  assert.equal(new Set(all).size, 16, "no port leased twice");
  assert.deepEqual([...all].sort((a, b) => a - b), Array.from({ length: 16 }, (_, i) => 20000 + i));
  for (const [i, s] of sessions.entries()) {
    assert.deepEqual(await sessionPorts(dir.path, s), got[i]);
  }
  const leases = await readLeases(dir.path);
  assert.ok(leases.every((l) => !l.stale && l.lease?.pid === Deno.pid));
});

Deno.test("leasePorts(): two processes leasing at once never get the same port", async () => {
  await using dir = await leaseDir();
  const script = new URL("./ports.ts", import.meta.url).href;
  const code = (s: string) =>
    `const { leasePorts } = await import(${JSON.stringify(script)});` +
    `const got = [];for (let i = 0; i < 5; i++) got.push(...await leasePorts(` +
    `${JSON.stringify(dir.path)}, "${s}-" + i, 2, [20000, 20099], { isFree: () => true }));` +
    // Held until the test closes stdin (both have leased): a live holder's lease is never taken.
    `console.log(JSON.stringify(got)); for await (const _ of Deno.stdin.readable);`;
  const start = (s: string) =>
    new Deno.Command(Deno.execPath(), {
      args: ["eval", code(s)],
      stdin: "piped",
      stdout: "piped",
    }).spawn();
  const children = [start("a"), start("b")];
  const firstLine = async (child: Deno.ChildProcess) => {
    let text = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      if (text.includes("\n")) break;
    }
    return JSON.parse(text) as number[];
  };
  const ports = (await Promise.all(children.map(firstLine))).flat();
  for (const child of children) {
    await child.stdin.close();
    await child.status;
  }
  assert.equal(ports.length, 20);
  assert.equal(new Set(ports).size, 20, `distinct: ${ports}`);
});

Deno.test("leasePorts(): a port another program holds is skipped; a range without enough is an error naming the fix, and nothing stays leased", async () => {
  await using dir = await leaseDir();
  const busy = new Set([20001, 20003]);
  const isFree = (p: number) => !busy.has(p);
  assert.deepEqual(await leasePorts(dir.path, "a", 2, [20000, 20004], { isFree }), [20000, 20002]);
  await assert.rejects(
    () => leasePorts(dir.path, "b", 2, [20000, 20004], { isFree }),
    (e: Error) =>
      e instanceof PortRangeExhaustedError && /widen worktree\.port_range/.test(e.message),
  );
  assert.deepEqual(await sessionPorts(dir.path, "b"), [], "all or none");
  assert.deepEqual(await leasePorts(dir.path, "c", 1, [20000, 20004], { isFree }), [20004]);
});

Deno.test("stale leases (table): the holder is gone, its pid was reused, the file is unreadable → taken back; a live holder's lease is kept", async () => {
  const me = Deno.pid;
  const myStart = processStartTicks(me);
  const rows: [string, PortLease | string, boolean][] = [
    ["holder gone (orchestrator killed)", {
      port: 20000,
      session_id: "old",
      pid: await deadPid(),
      leased_at: "2026-01-01T00:00:00Z",
    }, true],
    ["pid reused by another process", {
      port: 20000,
      session_id: "old",
      pid: me,
      pid_start: (myStart ?? 0) + 12345,
      leased_at: "2026-01-01T00:00:00Z",
    }, myStart !== undefined],
    ["unreadable", "{torn", true],
    ["live holder", {
      port: 20000,
      session_id: "live",
      pid: me,
      ...(myStart === undefined ? {} : { pid_start: myStart }),
      leased_at: "2026-01-01T00:00:00Z",
    }, false],
  ];
  for (const [name, lease, stale] of rows) {
    await using dir = await leaseDir();
    await writeLease(dir.path, lease);
    assert.equal((await readLeases(dir.path))[0].stale, stale, name);
    const got = await leasePorts(dir.path, "new", 1, [20000, 20009], ALL_FREE);
    assert.deepEqual(
      got,
      [stale ? 20000 : 20001],
      `${name}: the lowest port ${stale ? "is taken back" : "stays leased"}`,
    );
  }
});

Deno.test("reclaimStaleLeases() removes only the leases of gone holders; releasePorts() only the session's", async () => {
  await using dir = await leaseDir();
  await leasePorts(dir.path, "mine", 2, [20000, 20009], ALL_FREE);
  await leasePorts(dir.path, "other", 1, [20000, 20009], ALL_FREE);
  await writeLease(dir.path, {
    port: 20005,
    session_id: "killed",
    pid: await deadPid(),
    leased_at: "2026-01-01T00:00:00Z",
  });
  const reclaimed = await reclaimStaleLeases(dir.path);
  assert.deepEqual(reclaimed.map((l) => [l.port, l.session_id]), [[20005, "killed"]]);
  assert.deepEqual(await releasePorts(dir.path, "mine"), [20000, 20001]);
  assert.deepEqual((await readLeases(dir.path)).map((l) => l.lease?.session_id), ["other"]);
  assert.ok(leaseHolderAlive((await readLeases(dir.path))[0].lease!));
});
