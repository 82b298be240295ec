/**
 * An agent that floods its output does not fill the disk: its log stops at `agent_log_max_mb`,
 * keeping its beginning, a line saying what was left out and its end — where the result and the
 * reason of a failure are — and the run, the journal's digest of the kept log and the board's
 * view of it agree. Real git, the scripted agent, the real server.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { rowsOf, serveBoard, watchedRun, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

const MiB = 1024 * 1024;

Deno.test("an agent that writes 6 MB of output under agent_log_max_mb: 1 leaves a log of at most 1 MiB, its end kept, and its work lands", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "work",
      steps: [{
        id: "flood",
        script: [
          ["print", "first line of the agent"],
          // ~6 MB of output, then the line a user would look for.
          [
            "run",
            'i=0; while [ $i -lt 200000 ]; do echo "flood $i .............."; i=$((i+1)); done',
          ],
          ["print", "LAST: the agent's result line"],
          ["write", "flood.txt", "done\n"],
          ["report", "flooded"],
        ],
      }],
    }],
    "agent_log_max_mb: 1\n",
  );
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", run.lines.join("\n"));
  const rows = await rowsOf(dir.path, result.runId);
  assert.ok(rows.some((r) => r.type === "task_merged" && r.data.task_id === "flood"));
  const captured = rows.find((r) => r.type === "task_log_captured");
  assert.ok(captured, "the session log was kept in the run directory");
  const sessionId = captured.data.session_id as string;
  const kept = join(dir.path, ".sdd/runs", result.runId, "logs", `${sessionId}.log`);
  const text = await Deno.readTextFile(kept);
  const size = (await Deno.stat(kept)).size;
  assert.ok(size <= MiB, `the log stays under its cap (${size} bytes)`);
  assert.equal(captured.data.bytes, size);
  assert.ok(text.includes("first line of the agent"), "its beginning is kept");
  assert.match(text, /──── service: this log reached its cap of 1 MiB \(agent_log_max_mb\)/);
  assert.match(text, /──── service: \d+ bytes of output left out here; its last \d+ bytes follow/);
  assert.match(text, /flood 199999 \.+\n(.*\n)*LAST: the agent's result line\n/, "its end is kept");

  // The board's card detail: the log verifies against the journal's digest, its tail is the end.
  await using server = await serveBoard(dir.path);
  const detail = await (await fetch(
    `${server.url}/review-board/runs/${result.runId}/tasks/flood`,
  )).json();
  const log = detail.task.attempts.at(-1).log;
  assert.equal(log.verified, true);
  assert.equal(log.truncated, true);
  assert.match(log.tail, /LAST: the agent's result line/);
  // A byte changed in the kept log: the page no longer vouches for it.
  await Deno.writeTextFile(kept, text.replace("first line", "First line"));
  const tampered = await (await fetch(
    `${server.url}/review-board/runs/${result.runId}/tasks/flood`,
  )).json();
  assert.equal(tampered.task.attempts.at(-1).log.verified, false);
  await Deno.remove(kept);
  const gone = await (await fetch(
    `${server.url}/review-board/runs/${result.runId}/tasks/flood`,
  )).json();
  assert.equal(gone.task.attempts.at(-1).log.missing, true);
});

Deno.test("agent_log_max_mb below 1 is refused before anything runs, naming the key", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{ name: "w", steps: [{ id: "a", script: [["report", "a"]] }] }],
    "agent_log_max_mb: 0\n",
  );
  const run = watchedRun(dir.path);
  const failed = await run.result.then(() => undefined, (e: Error) => e);
  const said = failed ? failed.message : run.lines.join("\n");
  assert.match(said, /agent_log_max_mb: Too small: expected number to be >=1/);
  await assert.rejects(Deno.stat(join(dir.path, ".sdd/runs")), Deno.errors.NotFound);
});
