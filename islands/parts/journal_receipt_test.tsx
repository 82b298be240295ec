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

Deno.test("JournalReceipt says which rows count for nothing, and why", () => {
  const one = renderToString(
    <JournalReceipt
      receipt={manyCardReceipt(3)}
      ignored={{
        count: 1,
        rows: [{
          index: 9,
          type: "task_review_decision",
          reason: "`principal` missing",
          task_id: "t",
        }],
      }}
    />,
  );
  assert.match(one, /data-ignored-rows="1"/);
  assert.match(
    one,
    /1 row of this journal counts for nothing — malformed, so the board and every view ignore it: row 9 task_review_decision \(`principal` missing\)\./,
  );
  const many = renderToString(
    <JournalReceipt
      receipt={manyCardReceipt(3)}
      ignored={{
        count: 30,
        rows: [{ index: 2, type: "task_claimed", reason: "`task_id` missing" }],
      }}
    />,
  );
  assert.match(
    many,
    /30 rows of this journal count for nothing .* ignore them: row 2 task_claimed \(`task_id` missing\); …\./,
  );
  assert.doesNotMatch(
    renderToString(<JournalReceipt receipt={manyCardReceipt(3)} />),
    /count for nothing/,
  );
});

Deno.test("JournalReceipt names the damage of a journal that does not verify, and that the run cannot be resumed", () => {
  const html = renderToString(
    <JournalReceipt
      receipt={manyCardReceipt(3, false)}
      damage="its last line (18) is torn: cut off before its end; lines 1–17 verify"
    />,
  );
  assert.match(html, /JOURNAL TAMPERED/);
  assert.match(html, /data-journal-damage="true">\(its last line \(18\) is torn/);
  assert.match(html, /the run cannot be resumed/);
  assert.doesNotMatch(html, /resumes it/);
});
