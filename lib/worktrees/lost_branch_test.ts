import assert from "node:assert/strict";
import { branchCheckLine, lastLoggedCommit } from "./lost_branch.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const ZERO = "0".repeat(40);

Deno.test("lastLoggedCommit() takes the new value of a HEAD log's last line that names a commit", () => {
  const log = `${ZERO} ${A} me <m> 1 +0000\tbranch: Created from main\n` +
    `${A} ${B} me <m> 2 +0000\tcommit: work\n`;
  assert.equal(lastLoggedCommit(log), B);
  assert.equal(lastLoggedCommit(`${A} ${ZERO} me <m> 3 +0000\tdeleted\n${log}`), B);
  assert.equal(lastLoggedCommit(""), undefined);
  assert.equal(lastLoggedCommit("garbage\n"), undefined);
});

Deno.test("branchCheckLine() says a put-back branch and a lost one with its fix, and nothing of a present one", () => {
  assert.equal(branchCheckLine("t", { kind: "present" }), undefined);
  assert.match(
    branchCheckLine("t", { kind: "restored", branch: "agent/s", commit: B })!,
    /^t: its branch agent\/s was deleted by hand; put back at bbbbbbbbbb/,
  );
  assert.match(
    branchCheckLine("t", { kind: "lost", branch: "agent/s", worktree: "/w/s" })!,
    /no commit of its worktree is known; .*`git worktree remove --force \/w\/s`/,
  );
});
