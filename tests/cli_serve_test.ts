/** Integration: the real `cli.ts serve` on a free port, used over HTTP, then `audit verify`. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { goldenWorkspace, startServing } from "./helpers.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

function cli(args: string[], env: Record<string, string> = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  });
}

function startServe(root: string, env: Record<string, string> = {}) {
  return startServing([CLI, "--root", root, "serve", "--port", "0"], env);
}

Deno.test("cli.ts serve answers the board API over HTTP, and audit verify checks the chain it wrote", async () => {
  await using ws = await goldenWorkspace();
  {
    await using server = await startServe(ws.path);
    const receipt = await (await fetch(`${server.url}/review-board/runs/golden`)).json();
    assert.equal(receipt.journal_verified, true);
    const res = await fetch(
      `${server.url}/dashboard/review-board/runs/golden/tasks/t-docs/review`,
      {
        method: "POST",
        headers: { "content-type": "application/json", "if-match": `"${receipt.projection_hash}"` },
        body: JSON.stringify({ decision: "request_changes", note: "add an example" }),
      },
    );
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.receipt.decision, "request_changes");
  }
  const ok = await cli(["--root", ws.path, "audit", "verify"]).output();
  assert.equal(ok.code, 0);
  assert.match(new TextDecoder().decode(ok.stdout), /intact, 1 entries/);

  const audit = join(ws.path, ".sdd/audit/audit.jsonl");
  await Deno.writeTextFile(
    audit,
    (await Deno.readTextFile(audit)).replace("add an example", "add an exampl3"),
  );
  const bad = await cli(["--root", ws.path, "audit", "verify"]).output();
  assert.equal(bad.code, 1);
  assert.match(new TextDecoder().decode(bad.stderr), /audit entry 0: hmac does not verify/);
});

Deno.test("cli.ts serve with SERVICE_TOKEN requires the bearer token", async () => {
  await using ws = await goldenWorkspace();
  await using server = await startServe(ws.path, { SERVICE_TOKEN: "s3cret" });
  const denied = await fetch(`${server.url}/review-board/runs`);
  assert.equal(denied.status, 401);
  await denied.body?.cancel();
  const allowed = await fetch(`${server.url}/review-board/runs`, {
    headers: { authorization: "Bearer s3cret" },
  });
  assert.equal(allowed.status, 200);
  await allowed.body?.cancel();
});

Deno.test("cli.ts refuses a non-loopback bind without a token, naming the fix", async () => {
  await using ws = await goldenWorkspace();
  const out = await cli(["--root", ws.path, "serve", "--host", "0.0.0.0", "--port", "0"]).output();
  assert.equal(out.code, 1);
  assert.match(new TextDecoder().decode(out.stderr), /SERVICE_TOKEN/);
});

Deno.test("cli.ts --help lists commands; every command has --help; unknown commands exit 1", async () => {
  const help = await cli(["--help"]).output();
  assert.equal(help.code, 0);
  const text = new TextDecoder().decode(help.stdout);
  assert.match(text, /serve/);
  assert.match(text, /audit verify/);
  for (const command of [["serve"], ["audit", "verify"]]) {
    const out = await cli([...command, "--help"]).output();
    assert.equal(out.code, 0);
    assert.match(new TextDecoder().decode(out.stdout), /^Usage: service /);
  }
  const unknown = await cli(["frobnicate"]).output();
  assert.equal(unknown.code, 1);
  assert.match(new TextDecoder().decode(unknown.stderr), /unknown command/);
});
