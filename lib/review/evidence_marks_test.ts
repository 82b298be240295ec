import assert from "node:assert/strict";
import { join } from "node:path";
import * as ev from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { passedCheck, producerRun, sealSample } from "../verification/_test_fixtures.ts";
import { evidenceDir, journalPath, workspacePaths } from "../workspace.ts";
import { ACTIVITY_SINK } from "../board/activity.ts";
import { IncrementalJournal } from "../journal/incremental.ts";
import { readJournal } from "../journal/journal_file.ts";
import { evidenceMarks } from "./evidence_marks.ts";

/** The marks as the run outline asks for them (sealed bundles from the activity fold). */
async function marksOf(paths: ReturnType<typeof workspacePaths>, runId: string) {
  const { state, walker } = await readJournal(
    journalPath(paths, runId),
    new IncrementalJournal(ACTIVITY_SINK),
  );
  const sealed = new Map<string, string>();
  for (const t of state.tasks.values()) {
    if (t.evidence_sealed) sealed.set(t.task_id, t.evidence_sealed);
  }
  return evidenceMarks(paths, { runId, journalVerified: walker.verified, sealed });
}

Deno.test("evidenceMarks() checks every sealed bundle of a run; an edited one is unverified at once", async () => {
  const root = await Deno.makeTempDir({ prefix: "evidence-marks-" });
  try {
    const paths = workspacePaths(root);
    await Deno.mkdir(join(paths.runs, "r1"), { recursive: true });
    await appendEvents(journalPath(paths, "r1"), [
      ev.runStarted({ run_id: "r1" }),
      ev.taskClaimed({ task_id: "t1", session_id: "s1" }),
      ev.taskClaimed({ task_id: "t2", session_id: "s2" }),
      ev.taskClaimed({ task_id: "t3", session_id: "s3" }),
    ]);
    for (const taskId of ["t1", "t2"]) {
      await sealSample(paths, {
        runId: "r1",
        taskId,
        producers: [producerRun("tests", "3 passed\n")],
        checks: [passedCheck("path_exists", "a.ts")],
      });
    }
    assert.deepEqual(await marksOf(paths, "r1"), {
      t1: { verified: true, problems: [] },
      t2: { verified: true, problems: [] },
    }, "t3 sealed nothing: no mark");
    const bundle = join(evidenceDir(paths, "r1", "t2"), "bundle.json");
    await Deno.writeTextFile(
      bundle,
      (await Deno.readTextFile(bundle)).replace(`"exit_code":0`, `"exit_code":1`),
    );
    const marks = await marksOf(paths, "r1");
    assert.deepEqual(marks.t1, { verified: true, problems: [] });
    assert.equal(marks.t2.verified, false);
    assert.match(marks.t2.problems.join("; "), /is not the .* chained in the journal/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
