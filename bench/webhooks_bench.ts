/**
 * Webhook intake as a tracker experiences it: `service serve` in its own fresh process on
 * 127.0.0.1 port 0 over a temporary workspace, started through the real code path (connection
 * gate, access log, origin guard, body limits, auth), and three phases over loopback:
 *
 * 1. signed deliveries: N GitHub-style `issue_comment` deliveries (~3 KB, each with its own
 *    delivery id): every one verified, accepted and its id appended to the replay ledger and
 *    synced before the 200 (not an issue event, so no task is written);
 * 2. replay storm: N re-sends of the last ids the receiver must remember (spec §8: 4096), in
 *    random order; every one verified and answered `replay`;
 * 3. issue events: `issues` deliveries about distinct issues; each creates a task (its YAML
 *    spec written and synced) before the 200. Aim: ≥ 2 000/s with p99 ≤ 25 ms (docs/performance.md).
 *
 * Then webhook → claim: `service run` without a plan in its own process (a continuous run from
 * tracker_b, the scripted agent through the generic adapter, a real git repository), and K signed
 * `issues` deliveries one after another, each sent once the run is idle again (the previous
 * ticket's work merged): the time from the first byte sent to the task's claim (its spec moved to
 * `.sdd/backlog/claimed/`) and to its `task_claimed` row (the agent started). Aim: claim ≤ 100 ms.
 *
 * The client is deliberately cheap, because it shares the machine's cores with the server:
 * C keep-alive connections, each sending one request at a time, every request (head and body,
 * signature included) built and signed before the clock starts and written in one write; the
 * answer is read by its Content-Length and its JSON `status` checked. `--client fetch` sends the
 * same requests with `fetch` instead (dearer on the client side). Latency is from the first byte
 * written to the last byte of the answer read. The CPU time each side spent per delivery is
 * reported too (Linux /proc), so a reader can tell whose cores the figure is bound by.
 *
 *   deno task bench:webhooks [--deliveries 20000] [--issues N] [--clients 32]
 *                            [--client raw|fetch] [--runs 1] [--claims 20] [--cpu-prof DIR]
 *
 * `--issues` is the number of issue events (default a tenth of the deliveries, 100 to 2000);
 * `--deliveries 0` skips the two intake phases (and the issue events too unless `--issues` is
 * given); `--claims 0` skips webhook → claim.
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { join } from "node:path";
import { signBody } from "../lib/webhooks/signature.ts";
import { committedRepo } from "./_fixture.ts";
import { removeBenchDir } from "./_bench_dir.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    deliveries: { type: "string", default: "20000" },
    clients: { type: "string", default: "32" },
    client: { type: "string", default: "raw" },
    runs: { type: "string", default: "1" },
    claims: { type: "string", default: "20" },
    issues: { type: "string" },
    "cpu-prof": { type: "string" },
  },
});
const N = Number(values.deliveries);
const CLIENTS = Number(values.clients);
const RUNS = N > 0 || values.issues ? Number(values.runs) : 0;
const CLAIMS = Number(values.claims);
const CLIENT = values.client === "fetch" ? "fetch" : "raw";
const ISSUE_EVENTS = values.issues
  ? Number(values.issues)
  : Math.max(100, Math.min(2000, Math.floor(N / 10)));
const SECRET = "bench-secret";
const CLI = new URL("../cli.ts", import.meta.url).pathname;
const AIM = { perSecond: 3000, p99: 20 };
/** Issue events, each creating a task (docs/performance.md). */
const ISSUE_AIM = { perSecond: 2000, p99: 25 };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A GitHub `issue_comment` delivery of realistic size (accepted and ignored: not an issue event). */
function commentPayload(i: number): string {
  return JSON.stringify({
    action: "created",
    issue: {
      number: 42,
      title: "Parser rejects trailing commas",
      state: "open",
      html_url: "https://github.com/octo-org/app/issues/42",
      labels: [{ id: 1, name: "bug", color: "d73a4a", default: true }],
      body: "Steps to reproduce\n".repeat(40),
      user: { login: "octocat", id: 1, type: "User", site_admin: false },
      created_at: "2026-11-20T10:00:00Z",
      updated_at: "2026-11-20T10:00:00Z",
    },
    comment: {
      id: 1_000_000 + i,
      body: `comment ${i}: ` + "lorem ipsum dolor sit amet ".repeat(60),
      user: { login: "octocat", id: 1, type: "User" },
      created_at: "2026-11-20T10:00:00Z",
    },
    repository: { id: 1, name: "app", full_name: "octo-org/app", private: false },
    sender: { login: "octocat", id: 1, type: "User" },
  });
}

/** A GitHub `issues` `opened` delivery: issue `n` becomes a task. */
function issuePayload(n: number): string {
  return JSON.stringify({
    action: "opened",
    issue: {
      number: n,
      title: `Parser rejects trailing commas (case ${n})`,
      state: "open",
      html_url: `https://github.com/octo-org/app/issues/${n}`,
      labels: [{ id: 1, name: "bug", color: "d73a4a", default: true }],
      body: "Steps to reproduce\n".repeat(40),
      user: { login: "octocat", id: 1, type: "User", site_admin: false },
      created_at: "2026-11-20T10:00:00Z",
      updated_at: "2026-11-20T10:00:00Z",
    },
    repository: { id: 1, name: "app", full_name: "octo-org/app", private: false },
    sender: { login: "octocat", id: 1, type: "User" },
  });
}

/** One signed delivery, as `fetch` arguments and as the raw bytes of the whole request. */
interface Delivery {
  body: string;
  headers: Record<string, string>;
  wire: Uint8Array;
}

function delivery(host: string, event: string, body: string, id = crypto.randomUUID()): Delivery {
  const headers = {
    "content-type": "application/json",
    "x-github-event": event,
    "x-tracker-b-delivery": id,
    "x-hub-signature-256": signBody("hub-sha256", SECRET, body),
  };
  const bytes = encoder.encode(body);
  const head = encoder.encode(
    `POST /webhooks/trackers/tracker_b HTTP/1.1\r\nhost: ${host}\r\n` +
      Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("") +
      `content-length: ${bytes.length}\r\n\r\n`,
  );
  const wire = new Uint8Array(head.length + bytes.length);
  wire.set(head);
  wire.set(bytes, head.length);
  return { body, headers, wire };
}

/** A keep-alive HTTP/1.1 connection sending one request at a time. */
class KeepAlive {
  #conn: Deno.TcpConn | undefined;
  #buf = new Uint8Array(64 * 1024);
  #start = 0;
  #end = 0;

  constructor(readonly port: number) {}

  /** Send `wire`, read the answer: its status and its body as text. */
  async send(wire: Uint8Array): Promise<{ status: number; body: string }> {
    if (!this.#conn) {
      this.#conn = await Deno.connect({ hostname: "127.0.0.1", port: this.port });
      this.#conn.setNoDelay(true);
      this.#start = this.#end = 0;
    }
    let at = 0;
    while (at < wire.length) at += await this.#conn.write(wire.subarray(at));
    let headEnd: number;
    while ((headEnd = this.#find()) < 0) await this.#fill();
    const head = decoder.decode(this.#buf.subarray(this.#start, headEnd)).toLowerCase();
    this.#start = headEnd + 4;
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
    if (!length) throw new Error(`answer without Content-Length: ${head}`);
    const size = Number(length[1]);
    while (this.#end - this.#start < size) await this.#fill();
    const body = decoder.decode(this.#buf.subarray(this.#start, this.#start + size));
    this.#start += size;
    if (/\r\nconnection:\s*close/.test(head)) this.close();
    return { status, body };
  }

  close(): void {
    try {
      this.#conn?.close();
    } catch { /* closed */ }
    this.#conn = undefined;
  }

  /** Index of the `\r\n\r\n` ending the answer's head in the buffer, else -1. */
  #find(): number {
    const b = this.#buf;
    for (let i = this.#start; i + 3 < this.#end; i++) {
      if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
    }
    return -1;
  }

  async #fill(): Promise<void> {
    if (this.#start === this.#end) this.#start = this.#end = 0;
    if (this.#end === this.#buf.length) {
      const grown = new Uint8Array(this.#buf.length * 2);
      grown.set(this.#buf.subarray(this.#start, this.#end));
      this.#end -= this.#start;
      this.#start = 0;
      this.#buf = grown;
    }
    const n = await this.#conn!.read(this.#buf.subarray(this.#end));
    if (n === null) throw new Error("the server closed the connection mid-answer");
    this.#end += n;
  }
}

/** CPU milliseconds of a process's threads: its main thread, and all the others together. */
function serverCpu(pid: number): { main: number; other: number } | undefined {
  try {
    const out = { main: 0, other: 0 };
    for (const e of Deno.readDirSync(`/proc/${pid}/task`)) {
      const stat = Deno.readTextFileSync(`/proc/${pid}/task/${e.name}/stat`);
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ms = (Number(f[11]) + Number(f[12])) * 10; // utime + stime, in 10 ms ticks
      if (e.name === String(pid)) out.main += ms;
      else out.other += ms;
    }
    return out;
  } catch {
    return undefined; // not Linux, or the thread went away while read
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Phase {
  name: string;
  count: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  /** CPU µs per delivery: server main thread, server's other threads, this client. */
  cpu?: { main: number; other: number; client: number };
}

async function phase(
  name: string,
  port: number,
  serverPid: number,
  deliveries: Delivery[],
): Promise<Phase> {
  const url = `http://127.0.0.1:${port}/webhooks/trackers/tracker_b`;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const count = (status: number, text: string) => {
    const key = status === 200 ? JSON.parse(text).status : String(status);
    statuses[key] = (statuses[key] ?? 0) + 1;
  };
  let next = 0;
  const server0 = serverCpu(serverPid);
  const client0 = process.cpuUsage();
  const start = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    const conn = new KeepAlive(port);
    try {
      while (next < deliveries.length) {
        const d = deliveries[next++];
        const t0 = performance.now();
        if (CLIENT === "raw") {
          const answer = await conn.send(d.wire);
          latencies.push(performance.now() - t0);
          count(answer.status, answer.body);
        } else {
          const res = await fetch(url, { method: "POST", headers: d.headers, body: d.body });
          const text = await res.text();
          latencies.push(performance.now() - t0);
          count(res.status, text);
        }
      }
    } finally {
      conn.close();
    }
  }));
  const seconds = (performance.now() - start) / 1000;
  const server1 = serverCpu(serverPid);
  const client = process.cpuUsage(client0);
  latencies.sort((a, b) => a - b);
  const n = deliveries.length;
  return {
    name,
    count: n,
    seconds,
    perSecond: n / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1],
    statuses,
    cpu: server0 && server1
      ? {
        main: (server1.main - server0.main) * 1000 / n,
        other: (server1.other - server0.other) * 1000 / n,
        client: (client.user + client.system) / n,
      }
      : undefined,
  };
}

function describe(p: Phase): string {
  const cpu = p.cpu
    ? `; CPU per delivery: server ${p.cpu.main.toFixed(0)} µs main thread + ${
      p.cpu.other.toFixed(0)
    } µs other threads, client ${p.cpu.client.toFixed(0)} µs`
    : "";
  return `${p.name}: ${p.perSecond.toFixed(0)}/s (${p.count} in ${p.seconds.toFixed(2)} s); ` +
    `p50 ${p.p50.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms, max ${p.max.toFixed(2)} ms; ` +
    JSON.stringify(p.statuses) + cpu;
}

const met = (p: Phase) => p.perSecond >= AIM.perSecond && p.p99 <= AIM.p99;

/** One whole run against a fresh server; true when every answer and the ledger check out. */
async function run(
  index: number,
): Promise<{ fresh?: Phase; storm?: Phase; issues: Phase; ok: boolean }> {
  const root = await Deno.makeTempDir({ prefix: "webhook-bench-" });
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n" +
      "    webhook: { enabled: true, secret_env: BENCH_WEBHOOK_SECRET }\n",
  );
  const profile = values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`] : [];
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...profile, CLI, "--root", root, "serve", "--port", "0"],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", BENCH_WEBHOOK_SECRET: SECRET },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!/listening on http:\/\/127\.0\.0\.1:(\d+)/.test(seen)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve exited before listening: ${seen}`);
      seen += value;
    }
    reader.releaseLock();
    server.stdout.cancel().catch(() => {});
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(seen)![1]);
    const host = `127.0.0.1:${port}`;

    // Signing is the tracker's cost, not the receiver's: done before the clock starts.
    const deliveries = Array.from(
      { length: N },
      (_, i) => delivery(host, "issue_comment", commentPayload(i)),
    );
    const bytes = N > 0 ? deliveries.reduce((n, d) => n + d.body.length, 0) / N : 0;
    // Warm-up on ids of their own (JIT, connections), not counted.
    await phase(
      "warm-up",
      port,
      server.pid,
      Array.from({ length: 500 }, (_, i) => delivery(host, "issue_comment", commentPayload(i))),
    );
    const intake = N > 0
      ? {
        fresh: await phase(
          "signed deliveries (accepted, durable ledger)",
          port,
          server.pid,
          deliveries,
        ),
        // The storm re-sends the deliveries the receiver must remember (spec §8: the last 4096
        // ids), in random order, N times in all. Concurrent clients finish slightly out of
        // order: stay a few ids inside the window.
        storm: await phase(
          "replay storm (remembered ids, random order)",
          port,
          server.pid,
          ((remembered) =>
            Array.from(
              { length: N },
              () => remembered[Math.floor(Math.random() * remembered.length)],
            ))(deliveries.slice(-Math.min(N, 4096 - 2 * CLIENTS))),
        ),
      }
      : undefined;
    const issues = await phase(
      "issue events (each creates a task, YAML synced)",
      port,
      server.pid,
      Array.from({ length: ISSUE_EVENTS }, (_, i) => delivery(host, "issues", issuePayload(i + 1))),
    );

    const ledger =
      (await Deno.readTextFile(join(root, ".sdd/runtime/tracker_webhook_ledger.jsonl")))
        .trim().split("\n");
    const tasks = [...Deno.readDirSync(join(root, ".sdd/backlog/open"))].length;
    if (index === 0) {
      console.log(
        `webhook intake: ${N} signed deliveries of ~${Math.round(bytes)} B over ${CLIENTS} ` +
          `keep-alive connections (${
            CLIENT === "raw"
              ? "pre-built, pre-signed HTTP/1.1 requests, one in flight per connection"
              : "fetch"
          }) to \`service serve\` in its own process (connection gate, access log, origin ` +
          `guard, body limits, auth), loopback; ${navigator.hardwareConcurrency} cores shared ` +
          `by server and client`,
      );
    }
    console.log(`run ${index + 1}:`);
    for (const p of [intake?.fresh, intake?.storm, issues]) if (p) console.log(`  ${describe(p)}`);
    const ok = (!intake ||
      intake.fresh.statuses.accepted === N && intake.storm.statuses.replay === N) &&
      issues.statuses.accepted === ISSUE_EVENTS && tasks === ISSUE_EVENTS &&
      ledger.length >= Math.min(N + ISSUE_EVENTS, 4096);
    const load = Deno.loadavg().map((l) => l.toFixed(1)).join(" ");
    console.log(
      `  ledger: ${ledger.length} lines after compaction (every accepted id appended, synced), ` +
        `${tasks} tasks — ${ok ? "OK" : "MISMATCH"}; load average ${load}`,
    );
    return { ...intake, issues, ok };
  } finally {
    server.kill("SIGTERM");
    await server.status;
    await removeBenchDir(root);
  }
}

/** Until `check` is true, looking every 2 ms; throws after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const deadline = performance.now() + ms;
  while (!await check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** `{task_id → [row types]}` of a journal, read whole (it stays small here). */
function journalRows(path: string): { type: string; data: { task_id?: string } }[] {
  try {
    return Deno.readTextFileSync(path).split("\n").filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

/** Webhook → claim: a continuous `service run`, K deliveries, each once the run is idle. */
async function claimLatency(): Promise<{ claim: number[]; row: number[] }> {
  const agent = new URL("../agents/scripted_agent.ts", import.meta.url).pathname;
  const root = await committedRepo("webhook-claim-bench-", {
    "README.md": "# bench\n",
    "service.yaml":
      `cli: generic\ncli_command: ${JSON.stringify([Deno.execPath(), "run", "-A", agent])}\n` +
      "roles:\n  backend: {}\ntrackers:\n  tracker_b:\n" +
      "    webhook: { enabled: true, secret_env: BENCH_WEBHOOK_SECRET }\n",
  });
  const runner = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
    env: { NO_COLOR: "1", BENCH_WEBHOOK_SECRET: SECRET },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const statePath = join(root, ".sdd/runtime/orchestrator.json");
  const claim: number[] = [];
  const row: number[] = [];
  try {
    let state: { run_id: string; url: string; status: string } | undefined;
    await until("the run to start", () => {
      try {
        state = JSON.parse(Deno.readTextFileSync(statePath));
      } catch {
        return false;
      }
      return state!.status === "running";
    });
    const journal = join(root, ".sdd/runs", state!.run_id, "journal.jsonl");
    const url = `${state!.url}/webhooks/trackers/tracker_b`;
    for (let n = 1; n <= CLAIMS; n++) {
      const payload = JSON.parse(issuePayload(n));
      payload.issue.body = "```agent-script\n" +
        JSON.stringify(["write", `f/${n}.txt`, `${n}\n`]) + '\n["report"]\n```';
      const d = delivery(new URL(url).host, "issues", JSON.stringify(payload));
      const t0 = performance.now();
      const res = await fetch(url, { method: "POST", headers: d.headers, body: d.body });
      const answer = await res.json();
      const taskId = answer.tickets?.[0]?.task_id;
      if (res.status !== 200 || !taskId) {
        throw new Error(`delivery ${n}: ${JSON.stringify(answer)}`);
      }
      const claimed = join(root, ".sdd/backlog/claimed", `${taskId}.yaml`);
      await until(`${taskId} claimed`, () => exists(claimed));
      claim.push(performance.now() - t0);
      const about = (type: string) => () =>
        journalRows(journal).some((r) => r.type === type && r.data?.task_id === taskId);
      await until(`${taskId}'s task_claimed row`, about("task_claimed"));
      row.push(performance.now() - t0);
      await until(`${taskId} merged`, about("task_merged"));
    }
  } finally {
    runner.kill("SIGTERM");
    await runner.status;
    await removeBenchDir(root);
  }
  return { claim, row };
}

function medianOf(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function spread(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${medianOf(xs).toFixed(1)} ms (min ${s[0].toFixed(1)}, max ${
    s[s.length - 1].toFixed(1)
  }, n ${s.length})`;
}

const results = [];
for (let i = 0; i < RUNS; i++) results.push(await run(i));
const verdict = (ps: Phase[]) => `${ps.filter(met).length}/${ps.length} runs met`;
if (N > 0 && RUNS > 0) {
  console.log(
    `aim ≥ ${AIM.perSecond}/s with p99 ≤ ${AIM.p99} ms: accepted ${
      verdict(results.map((r) => r.fresh!))
    }, replay storm ${verdict(results.map((r) => r.storm!))}`,
  );
}
if (RUNS > 0) {
  const is = results.map((r) => r.issues);
  console.log(
    `aim issue events ≥ ${ISSUE_AIM.perSecond}/s with p99 ≤ ${ISSUE_AIM.p99} ms: ${
      is.filter((p) => p.perSecond >= ISSUE_AIM.perSecond && p.p99 <= ISSUE_AIM.p99).length
    }/${is.length} runs met`,
  );
}
if (CLAIMS > 0) {
  const { claim, row } = await claimLatency();
  console.log(
    `webhook → claim: ${CLAIMS} signed \`issues\` deliveries to a continuous \`service run\`, ` +
      `each once the run is idle; load average ${
        Deno.loadavg().map((l) => l.toFixed(1)).join(" ")
      }`,
  );
  console.log(`  webhook → task claimed:          ${spread(claim)}`);
  console.log(`  webhook → task_claimed row:      ${spread(row)} (worktree made, agent started)`);
  console.log(`  aim claim ≤ 100 ms: ${medianOf(claim) <= 100 ? "met" : "MISSED"}`);
}
if (results.some((r) => !r.ok)) Deno.exitCode = 1;
