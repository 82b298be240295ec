import assert from "node:assert/strict";
import { verifyJournalText } from "../journal/verify.ts";
import { journalLines, sampleEvents } from "../../tests/helpers.ts";
import { damageFix, damageOf } from "./journal_damage.ts";

const lines = journalLines(sampleEvents());
const text = (ls: string[]) => ls.map((l) => `${l}\n`).join("");

/** The catalogue of broken journals, each with the words every view shows of it. */
const CASES: { name: string; text: string; words: string | undefined }[] = [
  { name: "a whole journal", text: text(lines), words: undefined },
  {
    name: "a torn tail",
    text: text(lines).slice(0, -20),
    words: `its last line (${lines.length}) is torn: cut off before its end; lines 1–${
      lines.length - 1
    } verify`,
  },
  {
    name: "a bit flip in line 2",
    text: text(lines.map((l, i) => i === 1 ? l.replace(/"ts":"2/, '"ts":"3') : l)),
    words: "line 2 was edited: its hash does not recompute; lines 1–1 verify",
  },
  {
    name: "swapped lines",
    text: text([lines[0], lines[2], lines[1], ...lines.slice(3)]),
    words:
      "line 2 is out of place (its seq is wrong: lines removed or reordered); lines 1–1 verify",
  },
  {
    name: "garbage first line",
    text: text(["{", ...lines.slice(1)]),
    words: "line 1 is not JSON; no line before it verifies",
  },
  {
    name: "an empty file",
    text: "",
    words: "its journal is empty: every row, its run_started first, was cut away",
  },
];

for (const c of CASES) {
  Deno.test(`damageOf() names ${c.name}`, () => {
    const report = verifyJournalText(c.text);
    assert.equal(
      damageOf(report.firstFault, new TextEncoder().encode(c.text).length)?.words,
      c.words,
    );
  });
}

Deno.test("damageFix() names the unfinished tasks to cancel and the plan to run again, never a resume", () => {
  const fix = damageFix(["a", "b"], "plan.yaml");
  assert.match(
    fix,
    /`service cancel --all` gives up its unfinished task\(s\) \(a, b\), then `service run plan.yaml` starts a new run/,
  );
  assert.doesNotMatch(fix, /resumes it/);
  assert.match(damageFix([]), /keep the file as evidence; `service run <plan>` starts a new run/);
});
