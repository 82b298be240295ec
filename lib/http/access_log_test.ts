import assert from "node:assert/strict";
import { AccessLog } from "./access_log.ts";

Deno.test("AccessLog rotates at the size limit keeping one backup", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const log = new AccessLog(`${dir}/access.jsonl`, 300);
    const rec = (i: number) => ({
      ts: `t${i}`,
      method: "GET",
      path: "/status",
      status: 200,
      ms: 1,
      principal: null,
    });
    for (let i = 0; i < 10; i++) {
      log.record(rec(i));
      log.flush();
    }
    const current = (await Deno.readTextFile(`${dir}/access.jsonl`)).trim().split("\n");
    const backup = (await Deno.readTextFile(`${dir}/access.jsonl.1`)).trim().split("\n");
    assert.ok((await Deno.stat(`${dir}/access.jsonl`)).size <= 300);
    assert.equal(JSON.parse(current.at(-1)!).ts, "t9");
    assert.ok(backup.length > 0);
    const entries = await Array.fromAsync(Deno.readDir(dir));
    assert.deepEqual(entries.map((e) => e.name).sort(), ["access.jsonl", "access.jsonl.1"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
