import assert from "node:assert/strict";
import { join } from "node:path";
import { findSessionRecord, readAgentUsage, readSessionUsage } from "./usage_reader.ts";
import { codexAdapter } from "./adapters/codex.ts";
import { SpendTracker } from "../cost/budget.ts";
import { emptyCostReport } from "../cost/report.ts";
import { workspacePaths } from "../workspace.ts";

const THREAD = "01a20776-5e03-7ad2-9475-2e25749a6579";
const LOG = `{"type":"thread.started","thread_id":"${THREAD}"}\n` +
  '{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":10}}\n';
const RECORD = '{"type":"turn_context","payload":{"turn_id":"t","model":"gpt-6-luna"}}\n' +
  '{"type":"token_usage_record","payload":{"turn_id":"t","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":10}}}\n';

async function codexHome(dir: string, days: string[]): Promise<void> {
  for (const day of days) await Deno.mkdir(join(dir, "sessions", day), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "sessions", days[0], `rollout-2026-11-23T08-12-07-${THREAD}.jsonl`),
    RECORD,
  );
}

Deno.test("findSessionRecord() finds Codex's record among dated directories, newest first", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await codexHome(dir, ["2026/11/23", "2026/11/22", "2025/01/01"]);
    const path = await findSessionRecord({
      dir: join(dir, "sessions"),
      suffix: `-${THREAD}.jsonl`,
    });
    assert.ok(path?.endsWith(`2026/11/23/rollout-2026-11-23T08-12-07-${THREAD}.jsonl`));
    assert.equal(await findSessionRecord({ dir: join(dir, "nope"), suffix: ".jsonl" }), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readAgentUsage() prices Codex's usage for the model of its record", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await codexHome(dir, ["2026/11/23"]);
    const withRecord = await readAgentUsage(codexAdapter, LOG, { CODEX_HOME: dir });
    assert.deepEqual(Object.keys(withRecord!.byModel), ["gpt-6-luna"]);
    const without = await readAgentUsage(codexAdapter, LOG, { CODEX_HOME: join(dir, "x") });
    assert.deepEqual(Object.keys(without!.byModel), ["unknown"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SpendTracker.record() writes the spend of the first agent on a fresh workspace", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(dir); // nothing under .sdd/ exists yet
    await Deno.mkdir(paths.runtime, { recursive: true });
    const log = join(paths.runtime, "s1.log");
    await Deno.writeTextFile(log, LOG);
    const tracker = new SpendTracker(paths, codexAdapter, emptyCostReport(null));
    await tracker.record("t1", "s1", await readSessionUsage(codexAdapter, log));
    const lines = (await Deno.readTextFile(join(paths.metrics, "cost.jsonl"))).trim().split("\n");
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]).task_id, "t1");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
