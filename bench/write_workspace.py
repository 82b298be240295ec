#!/usr/bin/env python3
"""Independent writer for the board-at-scale benchmark (standard library only).

Writes <root>/.sdd/runs/big/journal.jsonl (ROWS rows over TASKS tasks, ~400 bytes a row) and
SMALL finished runs of a few rows each, hashing rows exactly as DESIGN.md §4 says, without any of
the service's code.

Usage: python3 bench/write_workspace.py ROOT [ROWS] [TASKS] [SMALL]
"""
import hashlib
import json
import os
import sys

ZERO = "0" * 64


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def write_run(root, run_id, events, ts0):
    path = os.path.join(root, ".sdd", "runs", run_id)
    os.makedirs(path, exist_ok=True)
    prev, out = ZERO, []
    for seq, (kind, data) in enumerate(events):
        row = {"data": data, "prev": prev, "seq": seq, "ts": ts0, "type": kind, "v": 1}
        row["hash"] = hashlib.sha256(canonical(row).encode()).hexdigest()
        out.append(canonical(row))
        prev = row["hash"]
    with open(os.path.join(path, "journal.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def task_events(k, pad):
    tid = "task-%05d" % k
    session = "s-%05d" % k
    return [
        ("task_claimed", {"task_id": tid, "session_id": session, "role": "backend",
                          "title": "Implement part %d of the parser" % k, "detail": pad}),
        ("agent_heartbeat", {"task_id": tid, "session_id": session, "detail": pad}),
        ("task_diff_captured", {"task_id": tid, "session_id": session, "files": 3,
                                "added": k % 97, "removed": k % 13,
                                "sha256": "sha256:" + hashlib.sha256(tid.encode()).hexdigest()}),
        ("task_completed", {"task_id": tid, "session_id": session, "detail": pad}),
        ("task_merged", {"task_id": tid, "session_id": session,
                         "commit": hashlib.sha1(tid.encode()).hexdigest(), "detail": pad}),
    ]


def big_run(rows, tasks):
    pad = "x" * 130
    events = [("run_started", {"run_id": "big", "plan": "scale", "tasks": tasks})]
    per_task = max(1, (rows - 2) // tasks)
    for k in range(tasks):
        events.extend(task_events(k, pad)[:per_task])
    while len(events) < rows - 1:
        events.append(("agent_heartbeat", {"task_id": "task-00000", "detail": pad}))
    events.append(("run_completed", {"status": "completed", "tasks": tasks}))
    return events


def small_run(n):
    events = [("run_started", {"run_id": "small-%03d" % n, "plan": "small", "tasks": 3})]
    for k in range(3):
        events.extend(task_events(k, "y" * 40))
    events.append(("run_completed", {"status": "completed", "tasks": 3}))
    return events


if __name__ == "__main__":
    root = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    tasks = int(sys.argv[3]) if len(sys.argv) > 3 else 20_000
    small = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    for n in range(small):
        write_run(root, "small-%03d" % n, small_run(n), "2026-11-%02dT10:00:00.000Z" % (1 + n % 20))
    write_run(root, "big", big_run(rows, tasks), "2026-11-22T10:00:00.000Z")
