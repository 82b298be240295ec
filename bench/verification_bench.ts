/**
 * Verification figures, printed: `deno run -A bench/verification_bench.ts`.
 *
 * (a) The test-run detector on a 50 MB Claude Code stream-json session log (assistant turns,
 *     Bash tool results, one test summary near the end), the log parsed into events by the Claude
 *     adapter and read: MB/s. Every completion reads its log.
 * (b) The evidence endpoint as an operator's browser meets it: `service serve` started in a fresh
 *     process on a workspace whose run journal has 20 000 rows and whose bundle names three 4 MB
 *     producer outputs; the first GET (cold) and the median of 20 GETs, each re-hashing every
 *     output, re-walking the journal and the audit chain.
 */
import { join } from "node:path";
import { appendEvents } from "../lib/journal/journal_file.ts";
import * as ev from "../lib/journal/events.ts";
import { producerRun, sealSample } from "../lib/verification/_test_fixtures.ts";
import { detectTestRuns } from "../lib/verification/test_run_detector.ts";
import { parseClaudeLog } from "../lib/agents/adapters/claude_log.ts";
import { journalPath, workspacePaths } from "../lib/workspace.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function claudeLog(targetBytes: number): string {
  const parts: string[] = [];
  let size = 0;
  let i = 0;
  while (size < targetBytes) {
    const use = JSON.stringify({
      type: "assistant",
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: `toolu_${i}`, name: "Bash", input: { command: "ls" } }],
      },
    });
    const result = JSON.stringify({
      type: "user",
      message: {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: `toolu_${i}`,
          content: `src/file_${i}.ts\n`.repeat(40),
        }],
      },
    });
    parts.push(use, result);
    size += use.length + result.length + 2;
    i++;
  }
  parts.push(JSON.stringify({
    type: "user",
    message: {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: "t",
        content: "ok | 120 passed | 0 failed (3s)",
      }],
    },
  }));
  return parts.join("\n");
}

// (a)
const log = claudeLog(50 << 20);
const times: number[] = [];
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  const report = detectTestRuns(parseClaudeLog(log));
  times.push(performance.now() - t);
  if (!report.tests_run) throw new Error("the summary was not found");
}
const ms = median(times);
console.log(
  `(a) detector: ${(log.length / (1 << 20)).toFixed(0)} MB stream-json log in ${
    ms.toFixed(0)
  } ms ` +
    `(median of 5) = ${((log.length / (1 << 20)) / (ms / 1000)).toFixed(0)} MB/s`,
);

// (b)
const root = await Deno.makeTempDir({ prefix: "svc-verif-bench-" });
try {
  const paths = workspacePaths(root);
  const runId = "bench";
  const journal = journalPath(paths, runId);
  await Deno.mkdir(join(paths.runs, runId), { recursive: true });
  const rows = [ev.runStarted({ run_id: runId })];
  for (let i = 0; i < 20_000; i++) {
    rows.push(ev.taskClaimed({ task_id: `t${i % 500}`, session_id: `s${i}` }));
  }
  await appendEvents(journal, rows);
  const report = (n: number) => `line ${n} of the report\n`.repeat(200_000);
  await sealSample(paths, {
    runId,
    taskId: "t1",
    producers: [1, 2, 3].map((n) => producerRun(`p${n}`, report(n))),
  });
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "serve", "--port", "0"],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    let url: string | undefined;
    while (!url) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve ended: ${seen}`);
      seen += value;
      url = /http:\/\/127\.0\.0\.1:\d+/.exec(seen)?.[0];
    }
    const path = `${url}/review-board/runs/${runId}/evidence/t1`;
    const get = async () => {
      const t = performance.now();
      const res = await fetch(path);
      const body = await res.json();
      if (!body.verified) throw new Error(`not verified: ${JSON.stringify(body.problems)}`);
      return performance.now() - t;
    };
    const cold = await get();
    const warm: number[] = [];
    for (let i = 0; i < 20; i++) warm.push(await get());
    console.log(
      `(b) evidence endpoint (3 × ${(report(1).length / (1 << 20)).toFixed(1)} MB outputs, ` +
        `20 000-row journal), fresh \`service serve\`: first GET ${cold.toFixed(0)} ms, ` +
        `median of 20 ${median(warm).toFixed(0)} ms`,
    );
    reader.releaseLock();
  } finally {
    server.kill("SIGTERM");
    await server.status;
    await server.stderr.cancel().catch(() => {});
  }
} finally {
  await Deno.remove(root, { recursive: true });
}
