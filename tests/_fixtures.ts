/** Test fixtures: runs written with the real journal append, and synthetic diffs and boards. */
import { join } from "node:path";
import { appendEvents } from "../lib/journal/journal_file.ts";
import type { JournalEvent } from "../lib/journal/row.ts";
import { sha256Hex } from "../lib/journal/hash.ts";
import { canonicalJson } from "../lib/journal/canonical_json.ts";
import { type Board, type Card, COLUMNS } from "../lib/board/types.ts";
import { type ProjectionReceipt } from "../lib/board/types.ts";

/** A unified diff of `files` new files with `lines` added lines each. */
export function syntheticDiff(files: number, lines: number): string {
  const out: string[] = [];
  for (let f = 0; f < files; f++) {
    const path = `src/generated_${f}.ts`;
    out.push(
      `diff --git a/${path} b/${path}`,
      "new file mode 100644",
      "--- /dev/null",
      `+++ b/${path}`,
      `@@ -0,0 +1,${lines} @@`,
    );
    for (let i = 0; i < lines; i++) out.push(`+export const value_${f}_${i} = ${i};`);
  }
  return out.join("\n") + "\n";
}

/** Write a run whose task `taskId` completed with `diffText` captured. */
export async function writeRunWithDiff(
  runsDir: string,
  runId: string,
  taskId: string,
  diffText: string,
): Promise<void> {
  const dir = join(runsDir, runId);
  await Deno.mkdir(join(dir, "review", "diffs"), { recursive: true });
  const bytes = new TextEncoder().encode(diffText);
  await Deno.writeFile(join(dir, "review", "diffs", `${taskId}.diff`), bytes);
  const added = diffText.split("\n").filter((l) => l.startsWith("+") && !l.startsWith("+++"))
    .length;
  const files = diffText.split("\n").filter((l) => l.startsWith("diff --git ")).length;
  await appendEvents(join(dir, "journal.jsonl"), [
    { type: "run_started", data: { run_id: runId, plan: "big diff" } },
    { type: "task_claimed", data: { task_id: taskId, title: "Generate code", role: "backend" } },
    {
      type: "task_diff_captured",
      data: { task_id: taskId, sha256: "sha256:" + sha256Hex(bytes), added, removed: 0, files },
    },
    { type: "task_completed", data: { task_id: taskId } },
  ]);
}

/** Journal events for `n` tasks spread over the five columns. */
export function manyCardEvents(n: number): JournalEvent[] {
  const events: JournalEvent[] = [{ type: "run_started", data: { run_id: "many", plan: "many" } }];
  for (let i = 0; i < n; i++) {
    const task_id = `t-${String(i).padStart(4, "0")}`;
    events.push({
      type: "task_claimed",
      data: { task_id, title: `Task number ${i}`, role: "dev" },
    });
    events.push({
      type: "task_diff_captured",
      data: { task_id, sha256: "sha256:" + "ab".repeat(32), added: i, removed: 1, files: 2 },
    });
    const step = i % 5;
    if (step === 0) events.push({ type: "task_retried", data: { task_id } });
    if (step === 2) {
      events.push({
        type: "task_verification_failed",
        data: { task_id, signals: [{ kind: "test_passes", detail: "deno test exited 1" }] },
      });
    }
    if (step >= 3) events.push({ type: "task_completed", data: { task_id } });
    if (step === 4) {
      events.push({
        type: "task_review_decision",
        data: { task_id, decision: "merge", principal: "alice" },
      });
    }
  }
  return events;
}

/** A board with `n` cards spread over the columns, and its receipt (no journal needed). */
export function manyCardReceipt(n: number, verified = true): ProjectionReceipt {
  const columns = Object.fromEntries(COLUMNS.map((c) => [c, [] as Card[]])) as Board["columns"];
  for (let i = 0; i < n; i++) {
    const column = COLUMNS[i % 5];
    const card: Card = {
      task_id: `t-${String(i).padStart(4, "0")}`,
      last_index: i,
      title: `Task number ${i}`,
      role: "dev",
      diff: { sha256: "sha256:" + "ab".repeat(32), added: i, removed: 1, files: 2 },
    };
    if (column === "gated") card.gates = [{ kind: "test_passes", detail: "deno test exited 1" }];
    if (column === "merged") card.verdict = { decision: "merge", principal: "alice", index: i };
    columns[column].push(card);
  }
  const board: Board = {
    schema_version: 1,
    run: { started: { run_id: "many" }, completed: null },
    event_count: n,
    columns,
  };
  return {
    run_id: "many",
    board,
    projection_hash: sha256Hex(canonicalJson(board)),
    journal_head: "0".repeat(64),
    journal_verified: verified,
    event_count: n,
  };
}
