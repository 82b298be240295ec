/**
 * Full-disk probe (docs/security.md "Durability"): a real `service serve` over a workspace on a
 * small tmpfs that a filler file fills and frees round after round, while clients make every
 * kind of write the server takes: task creates (single and batch), claims, completions (the
 * verification ledger), review actions (the journal and the audit chain) and signed webhook
 * deliveries. Then the server is restarted from disk and every acknowledged write is looked for.
 *
 *   sudo deno run -A bench/full_disk_probe.ts [--rounds 20] [--per-round 12]
 *
 * It prints writes attempted, answered (an HTTP status came back), acknowledged (2xx), refused
 * (507) and lost (acknowledged, then not found after the restart: must be 0), and checks that
 * nothing that failed shows up (on the live server or after the restart), and that the journal
 * and the audit chain verify and agree.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { auditPaths, loadAuditKey, verifyAuditFile } from "../lib/audit/store.ts";
import { crossCheckWorkspace } from "../lib/audit/workspace_check.ts";
import { verifyJournalText } from "../lib/journal/verify.ts";
import { signBody } from "../lib/webhooks/signature.ts";
import { sha256Hex } from "../lib/journal/hash.ts";
import { workspacePaths } from "../lib/workspace.ts";
import { smallDisk, TMPFS_UNAVAILABLE } from "../tests/_tmpfs.ts";
import { loopbackServer } from "../tests/_raw_http.ts";
import { goldenWorkspace } from "../tests/helpers.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "20" },
    "per-round": { type: "string", default: "12" },
  },
});
const ROUNDS = Number(values.rounds);
const PER_ROUND = Number(values["per-round"]);
if (TMPFS_UNAVAILABLE) throw new Error(`cannot probe: ${TMPFS_UNAVAILABLE}`);

const TICKET = JSON.parse(
  await Deno.readTextFile(
    new URL("../tests/fixtures/trackers/github_issues_opened.json", import.meta.url),
  ),
);
const SECRET_ENV = `PROBE_WEBHOOK_SECRET_${Deno.pid}`;
Deno.env.set(SECRET_ENV, "probe-secret");

await using disk = await smallDisk(4 * 1024 * 1024);
const { path: root, runDir } = await goldenWorkspace(disk.path);
await Deno.writeTextFile(
  join(root, "service.yaml"),
  `cli: claude\nroles: [backend, docs]\ntrackers:\n  tracker_b:\n    webhook: { enabled: true, secret_env: ${SECRET_ENV} }\n`,
);
await new Deno.Command("git", { args: ["init", "-q", "-b", "main"], cwd: root }).output();

const serve = () => loopbackServer(root, { yaml: "" });

/** What a write was, whether it was acknowledged, and how to find it again. */
interface Write {
  kind: string;
  status: number;
  /** Set when acknowledged: how to check it landed. */
  check?: (state: LandedState) => boolean;
  /** Set when refused: how to check it did not land. */
  absent?: (state: LandedState) => boolean;
}

interface LandedState {
  tasks: Map<string, { status: string }>;
  journal: string;
  audit: string;
  ledger: string;
}

const writes: Write[] = [];
let n = 0;
const open: string[] = []; // acknowledged OPEN tasks (claimable)
const claimed: string[] = []; // acknowledged CLAIMED tasks (completable)

async function send(url: string, method: string, path: string, body: unknown, headers = {}) {
  try {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  } catch {
    return { status: 0, body: null };
  }
}

const DONE_OR_LATER = new Set(["DONE", "CLOSED"]);
const CLAIMED_OR_LATER = new Set(["CLAIMED", "IN_PROGRESS", ...DONE_OR_LATER]);

async function oneWrite(url: string): Promise<void> {
  const k = n++;
  const choice = k % 6;
  if (choice === 0) {
    const id = `c${k}`;
    const r = await send(url, "POST", "/tasks", { id, title: id, role: "backend" });
    if (r.status === 201) open.push(id);
    writes.push({
      kind: "task create",
      status: r.status,
      check: (s) => s.tasks.has(id),
      absent: (s) => !s.tasks.has(id),
    });
  } else if (choice === 1) {
    const ids = [`b${k}a`, `b${k}b`];
    const r = await send(url, "POST", "/tasks", {
      tasks: [{ id: ids[0], title: "a", role: "backend" }, {
        id: ids[1],
        title: "b",
        role: "backend",
        depends_on: [ids[0]],
      }],
    });
    if (r.status === 201) open.push(ids[0]);
    writes.push({
      kind: "task batch create",
      status: r.status,
      check: (s) => ids.every((i) => s.tasks.has(i)),
      absent: (s) => ids.every((i) => !s.tasks.has(i)),
    });
  } else if (choice === 2 && open.length > 0) {
    const id = open.shift()!;
    const r = await send(url, "POST", `/tasks/${id}/claim`, { session_id: `s-${id}` });
    if (r.status === 200) claimed.push(id);
    else open.push(id);
    writes.push({
      kind: "task claim (spec rewrite)",
      status: r.status,
      check: (s) => CLAIMED_OR_LATER.has(s.tasks.get(id)?.status ?? ""),
      absent: (s) =>
        s.tasks.get(id)?.status === "OPEN" || CLAIMED_OR_LATER.has(s.tasks.get(id)?.status ?? ""),
    });
  } else if (choice === 3 && claimed.length > 0) {
    const id = claimed.shift()!;
    const r = await send(url, "POST", `/tasks/${id}/complete`, { summary: "probe" });
    if (r.status !== 200) claimed.push(id);
    writes.push({
      kind: "task complete (ledger append)",
      status: r.status,
      check: (s) =>
        DONE_OR_LATER.has(s.tasks.get(id)?.status ?? "") && s.ledger.includes(`"task_id":"${id}"`),
    });
  } else if (choice === 4) {
    const decision = k % 12 < 6 ? "approve" : "request_changes";
    const note = k % 3 === 0 ? "x".repeat(3000 + (k % 900)) : `note ${k}`;
    const r = await send(url, "POST", "/dashboard/review-board/runs/golden/tasks/t-docs/review", {
      decision,
      note,
    });
    const receipt = r.body?.receipt;
    writes.push({
      kind: "review (journal + audit chain)",
      status: r.status,
      check: (s) =>
        s.journal.includes(`"hash":"${receipt.journal_entry_hash}"`) &&
        s.audit.split("\n").some((line) => line && sha256Hex(line) === receipt.audit_event_hash),
      absent: (s) => !s.journal.includes(`"note":"${note}"`),
    });
  } else {
    const number = 1000 + k;
    const issue = {
      ...TICKET.issue,
      number,
      title: `probe ${k}`,
      html_url: `https://x/i/${number}`,
    };
    const payload = JSON.stringify({ ...TICKET, issue });
    const r = await send(url, "POST", "/webhooks/trackers/tracker_b", payload, {
      "x-hub-signature-256": signBody("hub-sha256", "probe-secret", payload),
      "x-tracker-b-delivery": `d-${k}`,
      "x-github-event": "issues",
    });
    const taskId = r.body?.tickets?.[0]?.task_id;
    writes.push({
      kind: "webhook ticket (task create)",
      status: r.status,
      check: (s) => taskId === undefined || s.tasks.has(taskId),
    });
  }
}

/** What the server and the files hold now. */
async function landedState(url: string): Promise<LandedState> {
  const tasks = await (await fetch(`${url}/tasks`)).json();
  const paths = workspacePaths(root);
  return {
    tasks: new Map(tasks.tasks.map((t: { id: string; status: string }) => [t.id, t])),
    journal: await Deno.readTextFile(join(runDir, "journal.jsonl")),
    audit: await Deno.readTextFile(auditPaths(paths.audit).log).catch(() => ""),
    ledger: await Deno.readTextFile(paths.verificationNudges).catch(() => ""),
  };
}

let server = await serve();
let live: LandedState | undefined;
const started = performance.now();
try {
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 1) await disk.fill();
    else await disk.free();
    // Writes of one round run concurrently, as clients would.
    await Promise.all(Array.from({ length: PER_ROUND }, () => oneWrite(server.url)));
  }
  await disk.free();
  live = await landedState(server.url);
} finally {
  await disk.free();
  await server.shutdown();
}

// Restart from what is on disk, as after a crash or a reboot.
server = await serve();
let state: LandedState;
try {
  state = await landedState(server.url);
} finally {
  await server.shutdown();
}

const paths = workspacePaths(root);
const acknowledged = writes.filter((w) => w.status >= 200 && w.status < 300);
const refused = writes.filter((w) => w.status === 507);
const lost = acknowledged.filter((w) => !w.check!(state));
// A write that failed must not show, neither on the live server nor after the restart.
const failed = writes.filter((w) => w.status >= 500 && w.absent);
const phantoms = failed.filter((w) => !w.absent!(live!) || !w.absent!(state));
const audit = await verifyAuditFile(
  auditPaths(paths.audit),
  await loadAuditKey(auditPaths(paths.audit)),
);
const cross = await crossCheckWorkspace(paths);
const byKind: Record<string, Record<string, number>> = {};
for (const w of writes) {
  const row = byKind[w.kind] ??= {};
  row[String(w.status)] = (row[String(w.status)] ?? 0) + 1;
}
const report = {
  rounds: ROUNDS,
  seconds: Math.round((performance.now() - started) / 100) / 10,
  attempted: writes.length,
  answered: writes.filter((w) => w.status > 0).length,
  acknowledged: acknowledged.length,
  refused_507: refused.length,
  other: writes.filter((w) => w.status !== 507 && (w.status < 200 || w.status >= 300)).length,
  lost: lost.length,
  failed_but_shown: phantoms.length,
  journal_verified: verifyJournalText(state.journal).verified,
  audit_chain_verified: audit.ok,
  audit_entries: audit.entries,
  cross_check_findings: cross.findings.map((f) => f.message),
  by_kind: byKind,
};
console.log(JSON.stringify(report, null, 2));
if (
  lost.length > 0 || phantoms.length > 0 || !report.journal_verified || !audit.ok ||
  cross.findings.length > 0
) {
  throw new Error("the full-disk probe found lost, phantom or unverifiable writes");
}
