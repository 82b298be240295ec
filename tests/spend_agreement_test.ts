/**
 * `service status` (the `/status` spend part) and `service cost` read spend through one reader, so
 * they tell the same total and budget in every case, including a broken report.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

async function cli(root: string, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", SERVICE_SERVER_URL: "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

const RECORD = (task: string, micro: number) =>
  JSON.stringify({
    ts: 1_700_000_000,
    task_id: task,
    model: "sonnet",
    micro_usd: micro,
    input_tokens: 10,
    output_tokens: 1,
  }) + "\n";

const config = (extra: string) => `cli: claude\nroles:\n  backend: {}\n${extra}`;

interface Case {
  name: string;
  config?: string;
  report?: unknown;
  records?: string;
  total: number;
  budget: number | null;
}

const CASES: Case[] = [
  {
    name: "the config's budget wins over the report's",
    config: config("budget_usd: 2\n"),
    report: { total_micro_usd: 1_500_000, by_model: {}, by_task: {}, budget_micro_usd: 1_000_000 },
    total: 1_500_000,
    budget: 2_000_000,
  },
  {
    name: "a config without budget_usd means no budget, whatever the report says",
    config: config(""),
    report: { total_micro_usd: 7, by_model: {}, by_task: {}, budget_micro_usd: 1_000_000 },
    total: 7,
    budget: null,
  },
  {
    name: "without service.yaml the report's budget stands",
    report: { total_micro_usd: 7, by_model: {}, by_task: {}, budget_micro_usd: 1_000_000 },
    total: 7,
    budget: 1_000_000,
  },
  {
    name: "without a report the records are the total",
    config: config("budget_usd: 1\n"),
    records: RECORD("a", 400_000) + RECORD("b", 700_000),
    total: 1_100_000,
    budget: 1_000_000,
  },
  { name: "nothing spent", config: config("budget_usd: 1\n"), total: 0, budget: 1_000_000 },
];

async function workspace(root: string, c: Omit<Case, "name" | "total" | "budget">): Promise<void> {
  if (c.config !== undefined) await Deno.writeTextFile(join(root, "service.yaml"), c.config);
  if (c.report !== undefined) {
    await Deno.mkdir(join(root, ".sdd/runtime"), { recursive: true });
    const text = typeof c.report === "string" ? c.report : JSON.stringify(c.report);
    await Deno.writeTextFile(join(root, ".sdd/runtime/cost_report.json"), text);
  }
  if (c.records !== undefined) {
    await Deno.mkdir(join(root, ".sdd/metrics"), { recursive: true });
    await Deno.writeTextFile(join(root, ".sdd/metrics/cost.jsonl"), c.records);
  }
}

for (const c of CASES) {
  Deno.test(`service status and service cost agree: ${c.name}`, async () => {
    await using ws = await tempDir();
    await workspace(ws.path, c);
    const [status, cost] = await Promise.all([
      cli(ws.path, ["status", "--json"]),
      cli(ws.path, ["cost", "--json"]),
    ]);
    assert.equal(status.code, 0, status.stderr);
    assert.equal(cost.code, 0, cost.stderr);
    const spend = JSON.parse(status.stdout).spend;
    const view = JSON.parse(cost.stdout);
    assert.deepEqual(
      [spend.total_micro_usd, spend.budget_micro_usd],
      [c.total, c.budget],
      "status",
    );
    assert.deepEqual([view.total_micro_usd, view.budget_micro_usd], [c.total, c.budget], "cost");
  });
}

Deno.test("a broken cost_report.json: status and cost both name the file and the fix", async () => {
  await using ws = await tempDir();
  await workspace(ws.path, { config: config("budget_usd: 1\n"), report: '{"total_micro_usd": 12' });
  const [status, json, cost] = await Promise.all([
    cli(ws.path, ["status"]),
    cli(ws.path, ["status", "--json"]),
    cli(ws.path, ["cost"]),
  ]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /spend: .*cost_report\.json is not JSON.*fix: delete/);
  assert.match(JSON.parse(json.stdout).spend.error, /cost_report\.json is not JSON/);
  assert.equal(cost.code, 1);
  assert.match(cost.stderr, /cost_report\.json is not JSON[^]*fix: delete .*cost_report\.json/);
  assert.equal(
    await Deno.readTextFile(join(ws.path, ".sdd/runtime/cost_report.json")),
    '{"total_micro_usd": 12',
    "the broken file is left for the user",
  );
});

Deno.test("service status and service cost print the same amounts the same way (one money format)", async () => {
  await using ws = await tempDir();
  await workspace(ws.path, {
    config: config("budget_usd: 2.5\n"),
    records: RECORD("a", 1_234_560) + RECORD("b", 7_300),
  });
  const [status, cost] = await Promise.all([cli(ws.path, ["status"]), cli(ws.path, ["cost"])]);
  assert.equal(status.code, 0, status.stderr);
  assert.equal(cost.code, 0, cost.stderr);
  // $1.2419 of $2.5000: a fraction of a cent is not rounded away in either.
  assert.match(status.stdout, /^spend: \$1\.2419 \(budget \$2\.5000\)$/m);
  assert.match(cost.stdout, /^total: \$1\.2419 of budget \$2\.5000 /m);
  const amounts = (text: string) => new Set(text.match(/\$\d+\.\d+/g));
  for (const amount of amounts(status.stdout)) {
    assert.ok(amounts(cost.stdout).has(amount), `${amount} of status is in cost's output too`);
  }
});
