/**
 * An agent run as a host process can write the repository's own git setup — a hook, a filter
 * driver — which the service's git never runs but the user's own `git commit` would: the run's
 * last lines name each one (lib/runner/git_setup_watch.ts), and so does `service status`
 * afterwards, from the run's record (lib/status/git_setup.ts); a run that changed none says
 * nothing, and a run killed before it could record its end is compared with the setup now.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { cli, planYaml, sh, workspace } from "./_e2e.ts";
import { readRunState, writeRunState } from "../lib/runs/run_state.ts";
import { gitSetupPath, readGitSetupRecord } from "../lib/runs/git_setup.ts";
import { workspacePaths } from "../lib/workspace.ts";

Deno.test("a run whose agent plants a hook and a filter driver in the repository ends by naming both; none of it ran; a run that plants nothing says nothing", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const ran = join(root, "..", `${crypto.randomUUID()}.ran`);
  await workspace(root, [{
    name: "s",
    steps: [
      {
        id: "plant",
        script: [
          [
            "run",
            `common=$(git rev-parse --git-common-dir) && ` +
            `printf '#!/bin/sh\\ntouch ${ran}\\n' > "$common/hooks/post-commit" && ` +
            `chmod +x "$common/hooks/post-commit" && ` +
            `git config filter.evil.clean "sh -c 'touch ${ran}; cat'" && ` +
            `echo '* filter=evil' > .gitattributes`,
          ],
          ["write", "a.txt", "a\n"],
          ["report"],
        ],
      },
    ],
  }]);
  const lines: string[] = [];
  const result = await runPlan({ root, port: 0, app: SERVER_APP, out: (l) => lines.push(l) });
  const terminal = lines.join("\n");
  assert.equal(result.status, "completed", terminal);
  assert.match(terminal, /WARNING: your repository's git setup that runs commands changed/);
  assert.match(terminal, /^ {2}new hook \.git\/hooks\/post-commit$/m);
  assert.match(terminal, /^ {2}new config filter\.evil\.clean = sh -c 'touch .*; cat'$/m);
  assert.equal(await Deno.stat(ran).then(() => true, () => false), false, "the service ran none");

  // `service status` says the same afterwards, from the run's record (no server runs now).
  const status = await cli(root, "status");
  assert.equal(status.code, 0, status.out);
  assert.match(
    status.out,
    new RegExp(`changed during run ${result.runId} \\(an agent run as a host process`),
  );
  assert.match(status.out, /^ {2}new hook \.git\/hooks\/post-commit$/m);
  assert.match(status.out, /^ {2}new config filter\.evil\.clean = sh -c 'touch .*; cat'$/m);
  assert.match(status.out, /Remove what you did not put there yourself/);
  const json = JSON.parse((await cli(root, "status", "--json")).out);
  assert.equal(json.git_setup.run_id, result.runId);
  assert.equal(json.git_setup.since_run_began, false);
  assert.equal(json.git_setup.changes.length, 2);

  // The user removes them; the next run, whose agent plants nothing, says nothing of it.
  await Deno.remove(join(root, ".git/hooks/post-commit"));
  await sh(root, "config", "--unset", "filter.evil.clean");
  await Deno.writeTextFile(
    join(root, "plan.yaml"),
    planYaml([{
      name: "s",
      steps: [{ id: "quiet", script: [["write", "b.txt", "b\n"], ["report"]] }],
    }]),
  );
  const again: string[] = [];
  const second = await runPlan({
    root,
    port: 0,
    app: SERVER_APP,
    out: (l) => again.push(l),
  });
  assert.equal(second.status, "completed", again.join("\n"));
  assert.doesNotMatch(again.join("\n"), /WARNING: your repository's git setup/);
  assert.doesNotMatch((await cli(root, "status")).out, /git setup that runs commands/);

  // A run killed before it recorded its end (its state still says running, its record has no
  // `after`): status compares the setup as the run began with the setup now.
  const paths = workspacePaths(root);
  const state = (await readRunState(paths))!;
  const record = readGitSetupRecord(gitSetupPath(paths, second.runId))!;
  await Deno.writeTextFile(
    gitSetupPath(paths, second.runId),
    JSON.stringify({ before: record.before }),
  );
  await writeRunState(paths, { ...state, status: "running", pid: 2 ** 22 + 1 });
  await sh(root, "config", "core.fsmonitor", "./watch.sh");
  const killed = await cli(root, "status");
  assert.match(killed.out, new RegExp(`changed since run ${second.runId} began`));
  assert.match(killed.out, /^ {2}new config core\.fsmonitor = \.\/watch\.sh$/m);
});
