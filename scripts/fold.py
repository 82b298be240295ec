#!/usr/bin/env python3
"""Independent verifier and board fold for a run journal (DESIGN.md §3-§5), standard library only.

Usage: python3 scripts/fold.py .sdd/runs/<run_id>/journal.jsonl [--board]

Prints a JSON receipt: projection_hash, journal_head, journal_verified, event_count (and the
canonical board with --board). Anyone can check a served projection with it, without the service.
"""
import hashlib
import json
import sys

ZERO = "0" * 64
MOVES = {
    "task_claimed": "running",
    "task_verification_failed": "gated",
    "task_retried": "queued",
    "task_completed": "needs_review",
    "task_merged": "merged",
}


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and abs(v) <= 2**53 - 1


def canonical_form(v):
    """True when v has a canonical form (DESIGN.md §3): no non-integer or unsafe numbers."""
    if isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool) and not is_int(v)):
        return False
    if isinstance(v, list):
        return all(canonical_form(x) for x in v)
    if isinstance(v, dict):
        return all(canonical_form(x) for x in v.values())
    return True


def fold(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    tail = lines.pop()
    verified, prev, rows = True, ZERO, []
    for i, raw in enumerate(lines + ([tail] if tail else [])):
        try:
            row = json.loads(raw)
            assert isinstance(row, dict) and isinstance(row.get("data"), dict)
        except Exception:
            verified = False
            continue
        rows.append((i, row))
        if verified:
            body = {k: v for k, v in row.items() if k != "hash"}
            try:
                ok = row.get("seq") == i and row.get("prev") == prev and \
                    hashlib.sha256(canonical(body).encode()).hexdigest() == row.get("hash")
            except Exception:
                ok = False
            verified = ok
            prev = row.get("hash")
    started = completed = None
    cards, columns = {}, {}
    for i, row in rows:
        t, d = row.get("type"), row["data"]
        if t == "run_started":
            started = d if started is None and canonical_form(d) else started
            continue
        if t == "run_completed":
            completed = d if canonical_form(d) else completed
            continue
        tid = d.get("task_id")
        if not isinstance(tid, str):
            continue
        if t in MOVES or (t == "task_review_decision" and d.get("decision") == "merge" and isinstance(d.get("principal"), str)):
            card = cards.setdefault(tid, {"task_id": tid})
            card["last_index"] = i
            columns[tid] = MOVES.get(t, "merged")
        card = cards.get(tid)
        if card is None:
            continue
        if t == "task_claimed":
            for key in ("title", "role"):
                if isinstance(d.get(key), str):
                    card[key] = d[key]
        elif t == "task_verification_failed" and isinstance(d.get("signals"), list) and \
                canonical_form(d["signals"]):
            card["gates"] = d["signals"]
        elif t == "task_diff_captured":
            if isinstance(d.get("sha256"), str) and all(is_int(d.get(k)) for k in ("added", "removed", "files")):
                card["diff"] = {k: d[k] for k in ("sha256", "added", "removed", "files")}
        elif t == "task_review_decision":
            if d.get("decision") in ("approve", "request_changes", "merge") and isinstance(d.get("principal"), str):
                verdict = {"decision": d["decision"], "principal": d["principal"], "index": i}
                if isinstance(d.get("note"), str):
                    verdict["note"] = d["note"]
                card["verdict"] = verdict
    board_columns = {c: [] for c in ("queued", "running", "gated", "needs_review", "merged")}
    for tid, card in cards.items():
        board_columns[columns[tid]].append(card)
    for cards_in in board_columns.values():
        cards_in.sort(key=lambda c: (c["last_index"], c["task_id"]))
    board = {"schema_version": 1, "run": {"started": started, "completed": completed},
             "event_count": len(rows), "columns": board_columns}
    head = rows[-1][1].get("hash") if rows else ZERO
    return board, {
        "projection_hash": hashlib.sha256(canonical(board).encode()).hexdigest(),
        "journal_head": head,
        "journal_verified": verified,
        "event_count": len(rows),
    }


if __name__ == "__main__":
    board, receipt = fold(sys.argv[1])
    if "--board" in sys.argv:
        receipt["board"] = board
    print(canonical(receipt))
