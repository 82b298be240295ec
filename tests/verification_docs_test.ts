/**
 * The hand check of docs/verification.md, run as written: the Python snippet recomputes a really
 * sealed bundle (non-ASCII text included) and says True on every line — four, plus one per
 * evidence producer, as the page says — with the file key or with SERVICE_AUDIT_KEY; after an
 * edit it does not.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { auditPaths } from "../lib/audit/store.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import * as ev from "../lib/journal/events.ts";
import { bundlePath } from "../lib/verification/seal.ts";
import { passedCheck, producerRun, sealSample } from "../lib/verification/_test_fixtures.ts";
import { journalPath, workspacePaths } from "../lib/workspace.ts";
import { tempDir } from "./helpers.ts";

const DOC = new URL("../docs/verification.md", import.meta.url);

Deno.test("docs/verification.md: the Python bundle check agrees with the service", async () => {
  const text = await Deno.readTextFile(DOC);
  const script = /```python\n([\s\S]*?)```/.exec(text)![1];
  await using dir = await tempDir();
  const paths = workspacePaths(dir.path);
  await Deno.mkdir(join(paths.runs, "r1"), { recursive: true });
  await appendEvents(journalPath(paths, "r1"), [ev.runStarted({ run_id: "r1" })]);
  await sealSample(paths, {
    runId: "r1",
    taskId: "t1",
    checks: [passedCheck("quality_gate", "deno lint — ünïcode ✓ 😀", "lint")],
    producers: [producerRun("tests", "ok ✓\n")],
  });
  const file = join(dir.path, "check_bundle.py");
  await Deno.writeTextFile(file, script);
  const run = async () => {
    const out = await new Deno.Command("python3", {
      args: [file, dir.path, "r1", "t1"],
      env: { SERVICE_AUDIT_KEY: "" },
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout).trim().split("\n");
  };
  const lines = await run();
  assert.equal(lines.length, 5);
  assert.ok(lines.every((l) => l.endsWith(": True")), lines.join("\n"));
  const path = bundlePath(paths, "r1", "t1");
  await Deno.writeTextFile(
    path,
    (await Deno.readTextFile(path)).replace('"exit_code":0', '"exit_code":1'),
  );
  const after = await run();
  assert.match(after[0], /bundle_hash recomputes: False/);
  assert.match(after.join("\n"), /signature valid: False/);
});

Deno.test("docs/verification.md: the Python bundle check uses SERVICE_AUDIT_KEY when the service did; one line per producer", async () => {
  const text = await Deno.readTextFile(DOC);
  const script = /```python\n([\s\S]*?)```/.exec(text)![1];
  assert.match(
    text,
    /four lines .* and one `output of <producer> … re-hashes` line per evidence producer/s,
  );
  await using dir = await tempDir();
  const paths = workspacePaths(dir.path);
  await Deno.mkdir(join(paths.runs, "r1"), { recursive: true });
  await appendEvents(journalPath(paths, "r1"), [ev.runStarted({ run_id: "r1" })]);
  // The service signs with the key it reads; this process's environment is every test module's,
  // so the key is handed to the service as its file, then the file is changed: the script
  // verifies only if it takes SERVICE_AUDIT_KEY over the file, as the service would.
  const key = "a-key-from-the-environment";
  const audit = auditPaths(paths.audit);
  await Deno.mkdir(paths.audit, { recursive: true });
  await Deno.writeTextFile(audit.keyFile, `${key}\n`, { mode: 0o600 });
  await sealSample(paths, {
    runId: "r1",
    taskId: "t1",
    checks: [passedCheck("quality_gate", "lint", "lint")],
    producers: [producerRun("tests", "ok\n"), producerRun("coverage", "91%\n")],
  });
  await Deno.writeTextFile(audit.keyFile, "not-the-key-that-signed\n");
  const file = join(dir.path, "check_bundle.py");
  await Deno.writeTextFile(file, script);
  const out = await new Deno.Command("python3", {
    args: [file, dir.path, "r1", "t1"],
    env: { SERVICE_AUDIT_KEY: key },
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  assert.equal(lines.length, 4 + 2, lines.join("\n"));
  assert.ok(lines.every((l) => l.endsWith(": True")), lines.join("\n"));
});
