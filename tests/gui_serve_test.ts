import assert from "node:assert/strict";
import { join } from "node:path";
import { GOLDEN } from "./browser/_harness.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

async function readLine(reader: ReadableStreamDefaultReader<string>): Promise<string> {
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  return text;
}

Deno.test("service gui serve --help names its options", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "gui", "serve", "--help"],
  }).output();
  assert.equal(out.code, 0);
  const text = new TextDecoder().decode(out.stdout);
  for (const word of ["--port", "--host", "/dashboard/review-board", "without the task API"]) {
    assert.ok(text.includes(word), `help mentions ${word}`);
  }
});

Deno.test("service gui serve serves the board page, the board API and /events", async () => {
  const root = await Deno.makeTempDir();
  await Deno.mkdir(join(root, ".sdd", "runs", "golden", "review", "diffs"), { recursive: true });
  for (const file of ["journal.jsonl", "review/diffs/t-parser.diff"]) {
    await Deno.copyFile(join(GOLDEN, file), join(root, ".sdd", "runs", "golden", file));
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "gui", "serve", "--port", "0"],
    stdout: "piped",
    stderr: "inherit",
    env: { SERVICE_TOKEN: "" },
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    const url = /listening on (http:\/\/\S+)/.exec(await readLine(lines))?.[1];
    assert.ok(url, "the server announces its URL");
    const page = await fetch(`${url}/dashboard/review-board`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /data-island="BoardApp"/);
    const board = await fetch(`${url}/review-board/runs/golden`);
    assert.equal((await board.json()).journal_verified, true);
    const events = await fetch(`${url}/events`);
    assert.equal(events.headers.get("content-type"), "text/event-stream");
    await events.body!.cancel();
  } finally {
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0, "a clean stop on SIGTERM");
    await lines.cancel();
    await Deno.remove(root, { recursive: true });
  }
});
