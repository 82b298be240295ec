import assert from "node:assert/strict";
import { shellExitWords, signalName } from "./signal_numbers.ts";

Deno.test("shellExitWords(): a code above 128 names the signal it stands for; any other code is itself", () => {
  const cases: [number, string][] = [
    [0, "exit 0"],
    [1, "exit 1"],
    [128, "exit 128"],
    [130, "exit 130: SIGINT, interrupted"],
    [134, "exit 134: SIGABRT, aborted"],
    [137, "exit 137: SIGKILL, killed: the kernel's out-of-memory killer sends this, or a kill -9"],
    [139, "exit 139: SIGSEGV, crashed (segmentation fault)"],
    [143, "exit 143: SIGTERM, terminated"],
    [138, "exit 138"], // SIGUSR1: not in the table, not guessed
    [255, "exit 255"],
    [-9, "exit -9"],
  ];
  for (const [code, words] of cases) assert.equal(shellExitWords(code), words, String(code));
  assert.equal(signalName(9), "SIGKILL");
  assert.equal(signalName(99), undefined);
});
