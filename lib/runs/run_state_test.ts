import assert from "node:assert/strict";
import { stoppedOutcome } from "./run_state.ts";

Deno.test("stoppedOutcome(): a stopped run resumes only while it has unfinished tasks", () => {
  assert.equal(
    stoppedOutcome({ unfinished: 2 }),
    "stopped; `service run` resumes it (2 unfinished task(s))",
  );
  assert.equal(
    stoppedOutcome({ unfinished: 0 }),
    "stopped with every task finished; the next `service run` starts a new run",
  );
  // A state file from before the count was written: resuming is the safe thing to say.
  assert.equal(stoppedOutcome({}), "stopped; `service run` resumes it");
});
