/** `service verification reset` as a child process: asks, declines, moves the ledger aside. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, cli } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

async function reset(root: string, stdin: string, ...args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "verification", "reset", ...args],
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

const record = (task: string, verified: boolean) =>
  JSON.stringify({
    task_id: task,
    session_id: "s",
    timestamp: 1_700_000_000,
    tests_run: verified,
    quality_gates_run: false,
    completion_signals_checked: false,
    verified,
  }) + "\n";

Deno.test("service verification reset: asks, declines on anything but yes, moves the ledger aside (never deletes it)", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const none = await reset(root, "");
  assert.equal(none.code, 0, none.out);
  assert.match(
    none.out,
    /nothing to reset: \.sdd\/metrics\/verification_nudges\.jsonl does not exist/,
  );

  const metrics = join(root, ".sdd/metrics");
  await Deno.mkdir(metrics, { recursive: true });
  const ledger = join(metrics, "verification_nudges.jsonl");
  const text = record("a", false) + record("b", false) + record("c", true);
  await Deno.writeTextFile(ledger, text);
  for (const answer of ["", "n\n", "sure\n", "yess\n"]) {
    const declined = await reset(root, answer);
    assert.equal(declined.code, 1, declined.out);
    assert.match(
      declined.out,
      /holds 3 completion\(s\), 2 unverified \(the ALERT is on\)\. Move it aside\? \[y\/N\]/,
    );
    assert.match(declined.out, /not reset \(pass --yes to skip the question\)/);
    assert.equal(await Deno.readTextFile(ledger), text);
  }
  const agreed = await reset(root, "yes\n");
  assert.equal(agreed.code, 0, agreed.out);
  const moved = /moved to (\S+)/.exec(agreed.out)![1];
  assert.match(moved, /^\.sdd\/metrics\/verification_nudges\.\d{8}T\d{6}Z\.jsonl$/);
  assert.equal(await Deno.readTextFile(join(root, moved)), text, "the records are kept");
  await assert.rejects(Deno.stat(ledger), Deno.errors.NotFound);
  const status = await cli(root, "status", "--json");
  assert.equal(JSON.parse(status.out).verification_nudge.total_completions, 0);

  // --yes does not ask; a second reset in the same second never overwrites the first.
  await Deno.writeTextFile(ledger, record("d", false));
  const yes = await reset(root, "", "--yes");
  assert.equal(yes.code, 0, yes.out);
  assert.doesNotMatch(yes.out, /\[y\/N\]/);
  const files = [...Deno.readDirSync(metrics)].map((e) => e.name).filter((n) =>
    n.startsWith("verification_nudges.")
  );
  assert.equal(files.length, 2);
});
