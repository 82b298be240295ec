/**
 * A hostile worker against a live run on loopback (DESIGN.md §16): it speaks the protocol by
 * hand with its token and the capability its claim carried, and pushes what no agent of ours
 * would. The run must refuse its work with git's own reason, land nothing of it, and keep
 * telling the truth about the worker's slots.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { rowsOf, sh, until } from "./_e2e.ts";
import {
  serveForWorkers,
  sharedRemote,
  startWorker,
  WORKER_AUTH_YAML,
  WORKER_READ,
  WORKER_TOKEN,
  workerClone,
} from "./_workers.ts";

/** Run git in `cwd` with `input` on its standard input; its trimmed output. */
async function gitIn(cwd: string, input: string, ...args: string[]): Promise<string> {
  const child = new Deno.Command("git", { args, cwd, stdin: "piped", stdout: "piped" }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  assert.ok(out.success, `git ${args.join(" ")}`);
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("a hostile worker's pushed tree naming .git/hooks is refused with git's reason and nothing of it lands; its report frees its slot", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{ id: "t", script: [["write", "t.txt", "honest\n"], ["report", "done"]] }],
  }], "max_agents: 0\nheartbeat_timeout_s: 30\n" + WORKER_AUTH_YAML);
  const server = await serveForWorkers(root);
  try {
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    const post = async (path: string, body: unknown, token = WORKER_TOKEN) => {
      const res = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: res.status === 204 ? null : await res.json() };
    };
    const pool = async () =>
      (await (await fetch(`${server.url}/status`, { headers: WORKER_READ })).json())
        .worker_pool[0];
    assert.equal((await post("/workers/evil/register", { slots: 1 })).status, 200);
    let order: Record<string, string> | undefined;
    await until("evil claimed t", async () => {
      const claim = await post("/workers/evil/claim", { free: 1 });
      order = claim.body?.orders?.[0];
      return order !== undefined;
    });
    const { session_id: session, base, session_token: capability } = order!;
    assert.equal((await pool()).free, 0, "its one slot holds t");

    // Its "work": the base's tree plus .git/hooks/post-checkout, pushed to its session branch.
    const clone = await workerClone(dir.path, bare, "evil");
    await sh(clone, "fetch", "-q", "origin", `+${order!.base_ref}:${order!.base_ref}`);
    const hook = await gitIn(clone, "#!/bin/sh\ntouch pwned\n", "hash-object", "-w", "--stdin");
    const hooks = await gitIn(clone, `100755 blob ${hook}\tpost-checkout\n`, "mktree");
    const dotGit = await gitIn(clone, `040000 tree ${hooks}\thooks\n`, "mktree");
    const tree = await gitIn(
      clone,
      (await sh(clone, "ls-tree", base)) + `040000 tree ${dotGit}\t.git\n`,
      "mktree",
    );
    const commit = await gitIn(
      clone,
      "",
      "-c",
      "user.name=evil",
      "-c",
      "user.email=evil@x",
      "commit-tree",
      tree,
      "-p",
      base,
      "-m",
      "work",
    );
    await sh(clone, "push", "-q", "origin", `${commit}:refs/heads/agent/${session}`);
    const report = await post(`/workers/evil/sessions/${session}/report`, {
      task_id: "t",
      session_id: session,
      exit_code: 0,
      duration_ms: 10,
      commit,
    }, capability);
    assert.equal(report.status, 200);
    assert.equal((await pool()).free, 1, "its slot is free again once it reported");

    // An honest worker takes the next attempt, and its work lands.
    await using _good = startWorker(await workerClone(dir.path, bare, "good"), server.url, "good");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    const refused = rows.find((r) =>
      r.type === "task_verification_failed" && r.data.task_id === "t"
    );
    assert.match(
      JSON.stringify(refused?.data),
      /worker evil could not deliver agent\/.*hasDotgit: contains '\.git'/,
    );
    assert.match(lines.join("\n"), /t: worker evil could not deliver .*hasDotgit/);
    const claims = rows.filter((r) => r.type === "task_claimed").map((r) => r.data.worker);
    assert.deepEqual(claims, ["evil", "good"]);
    assert.equal(await Deno.readTextFile(join(root, "t.txt")), "honest\n");
    await assert.rejects(Deno.stat(join(root, "pwned")), Deno.errors.NotFound);
    const landed = await sh(root, "ls-tree", "-r", "--name-only", "HEAD");
    assert.doesNotMatch(landed, /post-checkout/);
  } finally {
    await server.shutdown();
  }
});
