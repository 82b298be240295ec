import assert from "node:assert/strict";
import { signAuditEntry, verifyAuditText } from "./chain.ts";
import { sha256Hex } from "../journal/hash.ts";

const key = new TextEncoder().encode("k".repeat(64));

function chain(n: number): string[] {
  let prev = "0".repeat(64);
  return Array.from({ length: n }, (_, seq) => {
    const { entry, line } = signAuditEntry(
      key,
      {
        event: "review_board.action",
        principal: "alice",
        data: { run_id: "r", task_id: `t${seq}`, decision: "approve" },
      },
      { prev, seq, ts: "2026-11-21T10:00:00.000Z" },
    );
    prev = entry.hmac;
    return line;
  });
}

const lines = chain(4);

Deno.test("verifyAuditText() accepts an intact chain and reports its head", () => {
  const report = verifyAuditText(key, lines.join("\n") + "\n");
  assert.equal(report.ok, true);
  assert.equal(report.entries, 4);
  assert.equal(report.head, JSON.parse(lines[3]).hmac);
});

Deno.test("signAuditEntry() line hash is the SHA-256 of the stored line, checkable without the key", () => {
  const { line, lineHash } = signAuditEntry(
    key,
    { event: "e", principal: "p", data: {} },
    { prev: "0".repeat(64), seq: 0, ts: "t" },
  );
  assert.equal(lineHash, sha256Hex(line));
});

const BROKEN: [string, string, number][] = [
  [
    "an edited principal",
    [lines[0], lines[1].replace('"alice"', '"mallory"'), ...lines.slice(2)].join("\n") + "\n",
    1,
  ],
  ["swapped entries", [lines[0], lines[2], lines[1], lines[3]].join("\n") + "\n", 1],
  ["a removed entry", [lines[0], ...lines.slice(2)].join("\n") + "\n", 1],
  ["a torn last line", lines.join("\n") + "\n" + lines[0].slice(0, 30), 4],
  [
    "a forged hmac",
    [lines[0].replace(/"hmac":"[0-9a-f]{64}"/, `"hmac":"${"f".repeat(64)}"`), ...lines.slice(1)]
      .join("\n") + "\n",
    0,
  ],
  ["garbage", "not json\n", 0],
];

for (const [name, text, seq] of BROKEN) {
  Deno.test(`verifyAuditText() rejects ${name}`, () => {
    const report = verifyAuditText(key, text);
    assert.equal(report.ok, false);
    assert.equal(report.fault?.seq, seq);
  });
}

Deno.test("verifyAuditText() rejects a chain verified under another key", () => {
  assert.equal(
    verifyAuditText(new TextEncoder().encode("other"), lines.join("\n") + "\n").ok,
    false,
  );
});
