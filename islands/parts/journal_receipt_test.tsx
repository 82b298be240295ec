import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { JournalReceipt } from "./journal_receipt.tsx";
import { manyCardReceipt } from "../../tests/_fixtures.ts";

Deno.test("JournalReceipt stamps an unverified journal JOURNAL TAMPERED as an alert", () => {
  const html = renderToString(<JournalReceipt receipt={manyCardReceipt(3, false)} />);
  assert.match(html, /JOURNAL TAMPERED/);
  assert.match(html, /role="alert"/);
  assert.match(html, /review actions are disabled/);
});

Deno.test("JournalReceipt shows a verified journal with its hashes and no stamp", () => {
  const receipt = manyCardReceipt(3);
  const html = renderToString(<JournalReceipt receipt={receipt} />);
  assert.doesNotMatch(html, /TAMPERED/);
  assert.match(html, /journal verified/);
  assert.ok(html.includes(receipt.projection_hash));
  assert.ok(html.includes(receipt.journal_head));
});

Deno.test("JournalReceipt says the journal and the audit chain disagree and names the row", () => {
  const html = renderToString(
    <JournalReceipt
      receipt={manyCardReceipt(3, false)}
      disagreement="row 14 of run golden records principal mallory, but audit entry 0 signed principal alice"
    />,
  );
  assert.match(html, /JOURNAL TAMPERED/);
  assert.match(html, /the journal and the signed audit chain disagree: row 14 of run golden/);
  assert.doesNotMatch(html, /does not recompute/);
});
