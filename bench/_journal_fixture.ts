/** A realistic large journal for benchmarks: ~400-byte rows over 5 000 tasks. */
import { encodeRow, type JournalEvent } from "../lib/journal/row.ts";
import { ZERO_HASH } from "../lib/journal/hash.ts";

const TYPES = [
  "task_claimed",
  "task_diff_captured",
  "task_completed",
  "agent_heartbeat",
  "task_verification_failed",
  "task_retried",
];

/** One benchmark event. */
export function benchEvent(i: number): JournalEvent {
  const task_id = `task-${String(i % 5000).padStart(5, "0")}`;
  const type = i === 0 ? "run_started" : TYPES[i % TYPES.length];
  const data: Record<string, string | number | { kind: string; detail: string }[]> = {
    task_id,
    session_id: `s-${i}`,
    detail: "x".repeat(70),
  };
  if (type === "task_claimed") {
    Object.assign(data, { title: `Implement part ${i % 5000} of the parser`, role: "backend" });
  }
  if (type === "task_diff_captured") {
    Object.assign(data, {
      sha256: "sha256:" + "ab".repeat(32),
      added: i % 97,
      removed: i % 13,
      files: 3,
    });
  }
  if (type === "task_verification_failed") {
    data.signals = [{ kind: "test_passes", detail: "deno test exited 1" }];
  }
  return { type, data };
}

/** Journal text of `n` rows. */
export function benchJournal(
  n: number,
  start = 0,
  prev = ZERO_HASH,
): { text: string; head: string } {
  const lines: string[] = [];
  for (let i = start; i < start + n; i++) {
    const { line, hash } = encodeRow(benchEvent(i), {
      prev,
      seq: i,
      ts: "2026-11-21T10:00:00.000Z",
    });
    lines.push(line);
    prev = hash;
  }
  return { text: lines.join("\n") + "\n", head: prev };
}
