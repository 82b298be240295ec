import assert from "node:assert/strict";
import { DISK_FULL, diskFullDiagnosis, diskFullSaid, isDiskFull } from "./disk_full.ts";
import { StorageFullError } from "../errors.ts";

Deno.test("isDiskFull() knows a full disk or quota by its code, its error type or the words programs print", () => {
  const full = (code: string) => Object.assign(new Error("write failed"), { code });
  const cases: [unknown, boolean][] = [
    [full("ENOSPC"), true],
    [full("EDQUOT"), true],
    [new StorageFullError("/w/.sdd/x", "No space left on device (os error 28)"), true],
    [
      new Error("git add -A exited with 128: fatal: sha1 file 'x' write error. Out of diskspace"),
      true,
    ],
    [new Error("fatal: unable to write new index file: No space left on device"), true],
    [new Error("write /w/x: Disk quota exceeded (os error 122)"), true],
    [full("EACCES"), false],
    [new Error("fatal: not a git repository"), false],
    [undefined, false],
  ];
  for (const [error, want] of cases) assert.equal(isDiskFull(error), want, String(error));
});

Deno.test("diskFullSaid() quotes the line that says the disk is full, escaped", () => {
  assert.equal(
    diskFullSaid("ok\ncp: error writing 'a': No space left on device\nbye"),
    "cp: error writing 'a': No space left on device",
  );
  assert.equal(diskFullSaid("ENOSPCX is not a code\nall good"), undefined);
  assert.ok(!diskFullSaid("write failed: ENOSPC \x1b[31m!\x1b[0m")!.includes("\x1b"), "escaped");
});

Deno.test("diskFullDiagnosis() names the step, where, what was said and the way out; no attempt counts", () => {
  const d = diskFullDiagnosis(
    "committing the agent's work",
    "/w/.sdd/worktrees/s-1",
    "git add -A exited with 128: fatal: write error. Out of diskspace",
  );
  assert.equal(d.kind, DISK_FULL);
  assert.equal(d.retryable, true);
  assert.match(
    d.reason,
    /^the disk is full: committing the agent's work failed in \/w\/\.sdd\/worktrees\/s-1 \(git add -A exited with 128: fatal: write error\. Out of diskspace\); no attempt counted, the task's work is kept and the run stops\. Free space on that disk \(`df -h \/w\/\.sdd\/worktrees\/s-1`\), then `service run` resumes it$/,
  );
});
