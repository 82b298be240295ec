/**
 * Commits that land on the target branch while a run is live without the service making them —
 * here an agent run as a host process that commits and moves `main` with its own git — are named
 * at the run's end and by `status` (lib/runs/outside_commits.ts): "completed" never hides an
 * unverified commit on your branch. Real git, the scripted agent, the real task server.
 */
import assert from "node:assert/strict";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { collectStatus } from "../lib/status/status.ts";
import { appContext } from "../lib/server/serve.ts";
import { formatStatus } from "../lib/status/format.ts";
import { outsideCommitsWarning } from "../lib/runs/outside_commits_words.ts";
import { tempDir } from "./helpers.ts";
import { planYaml, sh, workspace } from "./_e2e.ts";
import { join } from "node:path";

const quiet = { port: 0, app: SERVER_APP };

Deno.test("an agent that commits onto main with its own git is named at the run's end and by status; a later run with none clears it", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [
      {
        id: "mover",
        script: [
          [
            "run",
            "echo evil > evil.txt && git add evil.txt && git commit -qm 'evil direct' && " +
            "git update-ref refs/heads/main HEAD && git reset -q --hard HEAD~1",
          ],
          ["report", "nothing to see"],
        ],
      },
      { id: "honest", script: [["write", "honest.txt", "ok\n"], ["report", "wrote it"]] },
    ],
  }]);
  const lines: string[] = [];
  const result = await runPlan({ root: dir.path, ...quiet, out: (l) => lines.push(l) });
  assert.equal(result.status, "completed", lines.join("\n"));
  const said = lines.join("\n");
  assert.match(
    said,
    /WARNING: main gained commits the service did not make while this run was live; they were not verified, gated or reviewed by it:\n {2}[0-9a-f]{10} evil direct \(e2e\)\n {2}If you did not make them, look at them before you push/,
  );
  assert.doesNotMatch(said, /service: merge honest/, "the service's own merge is not named");
  const status = await collectStatus(appContext(dir.path, [])) as Record<string, unknown>;
  const part = status.outside_commits as { outside: { subject: string }[]; run_id: string };
  assert.deepEqual(part.outside.map((c) => c.subject), ["evil direct"]);
  assert.equal(part.run_id, result.runId);
  const plain = (s: string) => s;
  const palette = { bold: plain, red: plain, yellow: plain, green: plain };
  assert.match(
    formatStatus(status, "test", palette).join("\n"),
    /main gained commits .* while run \S+ was live/,
  );

  // A later run in which nothing but the service lands says nothing, and status moves on.
  await Deno.writeTextFile(
    join(dir.path, "plan2.yaml"),
    planYaml([{
      name: "t",
      steps: [{ id: "more", script: [["write", "more.txt", "x\n"], ["report"]] }],
    }]),
  );
  await sh(dir.path, "add", "plan2.yaml");
  await sh(dir.path, "commit", "-qm", "plan2");
  const quietLines: string[] = [];
  const second = await runPlan({
    root: dir.path,
    plan: "plan2.yaml",
    ...quiet,
    out: (l) => quietLines.push(l),
  });
  assert.equal(second.status, "completed", quietLines.join("\n"));
  assert.ok(!quietLines.some((l) => l.includes("did not make")), quietLines.join("\n"));
  const after = await collectStatus(appContext(dir.path, [])) as Record<string, unknown>;
  assert.equal(after.outside_commits, null);
});

Deno.test("the outside-commits warning escapes subjects and authors, counts what it does not name, and says a reset", () => {
  const start = "a".repeat(40);
  const lines = outsideCommitsWarning({
    branch: "main",
    start,
    outside: [{ sha: "b".repeat(40), subject: "\x1b]0;owned\x07 fix", author: "mal\u202eory" }],
    more: 3,
  }, "r1");
  assert.equal(lines[1], "  bbbbbbbbbb \\x1b]0;owned\\x07 fix (mal\\u202eory)");
  assert.equal(lines[2], "  … and 3 more");
  assert.match(lines[0], /while run r1 was live/);
  const reset = outsideCommitsWarning({ branch: "main", start, outside: [], rewritten: true });
  assert.match(
    reset[0],
    /main no longer holds aaaaaaaaaa, its tip when this run began \(it was reset or rewritten\)/,
  );
  assert.deepEqual(outsideCommitsWarning({ branch: "main", start, outside: [] }), []);
});
