import assert from "node:assert/strict";
import { repairJsonl } from "./repair_jsonl.ts";
import { repairStateOnStart } from "./startup_repair.ts";
import { workspacePaths } from "../workspace.ts";

const NOW = new Date("2026-01-02T03:04:05.678Z");

const CASES: { name: string; text: string; kept: string; dropped: number }[] = [
  {
    name: "a torn last line",
    text: '{"a":1}\n{"b":2}\n{"c":',
    kept: '{"a":1}\n{"b":2}\n',
    dropped: 1,
  },
  {
    name: "a garbage line in the middle",
    text: '{"a":1}\nxx\n{"b":2}\n',
    kept: '{"a":1}\n{"b":2}\n',
    dropped: 1,
  },
  { name: "only garbage", text: "\u0000\u0000\n", kept: "", dropped: 1 },
];

for (const c of CASES) {
  Deno.test(`repairJsonl() keeps every valid line and moves ${c.name} aside`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const file = `${dir}/m.jsonl`;
      await Deno.writeTextFile(file, c.text);
      const r = await repairJsonl(file, NOW);
      assert.equal(r?.dropped, c.dropped);
      assert.equal(await Deno.readTextFile(file), c.kept);
      assert.equal(r?.movedTo, `${file}.corrupt-2026-01-02T030405Z`);
      assert.ok((await Deno.readTextFile(r!.movedTo!)).length > 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("repairJsonl() leaves a healthy file alone and refuses run journals", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/ok.jsonl`, '{"a":1}\n');
    assert.deepEqual(await repairJsonl(`${dir}/ok.jsonl`), {
      path: `${dir}/ok.jsonl`,
      kept: 1,
      dropped: 0,
    });
    assert.equal(await repairJsonl(`${dir}/missing.jsonl`), undefined);
    await assert.rejects(repairJsonl(`${dir}/journal.jsonl`), /refusing to repair run journal/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("repairStateOnStart() repairs metrics, access log and webhook ledger, moves a corrupt export aside, never touches journals", async () => {
  const root = await Deno.makeTempDir();
  try {
    const p = workspacePaths(root);
    await Deno.mkdir(p.metrics, { recursive: true });
    await Deno.mkdir(p.runtime, { recursive: true });
    await Deno.mkdir(`${p.runs}/r1`, { recursive: true });
    await Deno.writeTextFile(
      `${p.metrics}/verification_nudges.jsonl`,
      '{"task_id":"a","verified":true}\n{"task_',
    );
    await Deno.writeTextFile(`${p.runtime}/access.jsonl`, '{"ts":1}\n{"ts":');
    await Deno.writeTextFile(`${p.runtime}/tracker_webhook_ledger.jsonl`, '{"id":"x"}\n{');
    await Deno.writeTextFile(`${p.runtime}/task-backlog.json`, '{"tasks":[');
    const torn = '{"seq":0}\n{"se';
    await Deno.writeTextFile(`${p.runs}/r1/journal.jsonl`, torn);
    const messages = await repairStateOnStart(p, NOW);
    assert.equal(messages.length, 4);
    assert.match(messages.join("\n"), /verification_nudges\.jsonl: kept 1 line\(s\), dropped 1/);
    assert.match(messages.join("\n"), /task-backlog\.json.*rebuilt from the task specs/);
    assert.equal(
      await Deno.readTextFile(`${p.metrics}/verification_nudges.jsonl`),
      '{"task_id":"a","verified":true}\n',
    );
    assert.equal(await Deno.readTextFile(`${p.runs}/r1/journal.jsonl`), torn);
    await Deno.stat(`${p.runtime}/task-backlog.json.corrupt-2026-01-02T030405Z`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("repairStateOnStart() removes temporary files whose writer is gone, keeps live writers' and the agents' worktrees", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    // A pid that cannot be running: past the highest the kernel hands out.
    const gonePid = Number((await Deno.readTextFile("/proc/sys/kernel/pid_max")).trim()) + 1;
    const files = {
      gone: `${paths.backlog}/open/t1.yaml.tmp-${gonePid}-ab12cd34`,
      goneDeep: `${paths.runs}/r1/evidence/t1/bundle.json.tmp-${gonePid}-0`,
      live: `${paths.runtime}/orchestrator.json.tmp-${Deno.pid}-ffff0000`,
      worktree: `${paths.worktrees}/s1/notes.tmp-${gonePid}-1`,
      kept: `${paths.backlog}/open/t1.yaml`,
    };
    for (const file of Object.values(files)) {
      await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(file, "x");
    }
    const messages = await repairStateOnStart(paths, NOW);
    assert.match(messages.join("\n"), /removed 2 temporary file\(s\) of interrupted writes/);
    const exists = (p: string) => Deno.stat(p).then(() => true, () => false);
    assert.equal(await exists(files.gone), false);
    assert.equal(await exists(files.goneDeep), false);
    assert.equal(await exists(files.live), true, "a running writer's file stays");
    assert.equal(await exists(files.worktree), true, "the agents' worktrees are the user's files");
    assert.equal(await exists(files.kept), true);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
