/**
 * Warm-up of the verify-and-fold path. A fresh process runs this code cold (the first fold of a
 * 40 MB journal took ~1.7x as long as the second), and the WebAssembly scanner starts in V8's
 * baseline tier, several times slower than the optimised code it tiers up to once it is hot. So
 * a server folds a small synthetic journal through the same functions once at start-up, then
 * hands back the young generation that grew meanwhile (lib/util/heap_release.ts).
 */
import { IncrementalJournal } from "../journal/incremental.ts";
import { encodeRow, type JournalEvent } from "../journal/row.ts";
import { ZERO_HASH } from "../journal/hash.ts";
import * as ev from "../journal/events.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";
import { boardBytes } from "./board_bytes.ts";
import { releaseHeap } from "../util/heap_release.ts";

/**
 * Fold a small synthetic journal of every kind the board folds, `passes` times over (about 12 000
 * rows for the default, ~0.1 s), and write its board's bytes each time. One small journal folded many times warms the same code as a
 * large one; V8's young generation grows meanwhile (to ~17 MB), and a full collection at the end
 * returns it, so a server idles on the heap it needs.
 */
export function warmUpFold(passes = 24, rows = 500): void {
  const lines: string[] = [];
  let prev = ZERO_HASH;
  for (let i = 0; i < rows; i++) {
    const task_id = `warm-${i % 100}`;
    const events: JournalEvent[] = [
      ev.taskClaimed({ task_id, session_id: "s", title: "warm-up", role: "r" }),
      // A type this release does not know: the fold skips it.
      { type: "agent_heartbeat", data: { session_id: "s", task_id } },
      ev.taskDiffCaptured({
        task_id,
        sha256: "sha256:" + "0".repeat(64),
        added: 1,
        removed: 0,
        files: 1,
      }),
      ev.taskVerificationFailed({ task_id, signals: [{ kind: "k", detail: "warm-up" }] }),
      ev.taskCompleted({ task_id }),
      ev.taskMerged({ task_id }),
    ];
    const { line, hash } = encodeRow(events[i % events.length], {
      prev,
      seq: i,
      ts: "2026-01-01T00:00:00Z",
    });
    lines.push(line);
    prev = hash;
  }
  const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
  for (let pass = 0; pass < passes; pass++) {
    // The board's bytes too: their writer is JavaScript card by card (./board_bytes.ts).
    boardBytes(new IncrementalJournal(BOARD_FOLD_SINK).update(bytes).state);
  }
  releaseHeap();
}
