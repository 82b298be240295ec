/**
 * The board's operator actions in a real browser over a real continuous run (the CLI, detached,
 * with the scripted agent): the operator opens "New task", fills the form and creates it; the
 * page says the running run takes it now; once its agent runs, the operator types a follow-up on
 * the task's detail and sends it; the agent reads it (`wait_follow_up`) and its work lands; the
 * follow-up — markup in it included — is shown as text, never as markup.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { AGENT, cli, serveBoard, sh, until } from "../_e2e.ts";
import { launchChromiumContext } from "../_chromium.ts";
import { tempDir } from "../helpers.ts";
import { screenshot } from "./_harness.ts";

const script = (...directives: unknown[][]) =>
  "```agent-script\n" + directives.map((d) => JSON.stringify(d)).join("\n") + "\n```\n";

const HOSTILE = 'use the v2 API <img src=x onerror="window.__owned=1">';

Deno.test("board page: New task creates a task the live run takes, and a follow-up sent from its detail reaches its agent", async () => {
  await using dir = await tempDir();
  await using profile = await tempDir("board-chromium-");
  const root = dir.path;
  await sh(root, "init", "-q", "-b", "main");
  await sh(root, "config", "user.email", "t@localhost");
  await sh(root, "config", "user.name", "t");
  await Deno.writeTextFile(join(root, "README.md"), "# board tasks\n");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      "roles:\n  backend: {}\n",
  );
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "init");
  const exists = (f: string) => Deno.stat(join(root, f)).then(() => true, () => false);
  { // A first task, so that `service run` has something to start with.
    await using server = await serveBoard(root);
    const res = await fetch(`${server.url}/dashboard/review-board/tasks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        title: "First",
        role: "backend",
        goal: script(["write", "first.txt", "first\n"], ["report", "first"]),
      }),
    });
    assert.equal(res.status, 201, await res.text());
  }
  let context: BrowserContext | undefined;
  try {
    const started = await cli(root, "run", "--detach", "--port", "0");
    assert.equal(started.code, 0, started.out);
    await until("the first task lands", () => exists("first.txt"), 90_000);
    const state = JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
    context = await launchChromiumContext(profile.path, {
      viewport: { width: 1400, height: 1000 },
    });
    const page = context.pages()[0] ?? await context.newPage();
    await page.goto(`${state.url}/dashboard/review-board?run=${state.run_id}`);
    await page.locator(".columns").waitFor({ timeout: 20_000 });

    await page.getByText("New task", { exact: true }).click();
    await page.fill("input[name=title]", "Second");
    await page.fill("input[name=role]", "backend");
    await page.fill(
      "textarea[name=goal]",
      script(["wait_follow_up", "follow.txt"], ["report", "follow-up applied"]),
    );
    await page.click("button[data-operator=create-task]");
    const done = page.locator(".new-task [data-operator-done]");
    await done.waitFor();
    const created = (await done.textContent())!;
    assert.match(
      created,
      new RegExp(
        `^Created (t-[0-9a-f]{12}) \\(OPEN\\) by dashboard-operator: the running run ` +
          `${state.run_id} takes it now\\. Audit entry [0-9a-f]{64}$`,
      ),
    );
    const taskId = /Created (t-[0-9a-f]{12})/.exec(created)![1];
    await screenshot(page, "operator-new-task.png");

    await page.locator(`[data-column=running] [data-task-id=${taskId}]`).click();
    const box = page.locator("textarea[name=follow-up]");
    await until("the follow-up box opens for the running task", () => box.isEnabled(), 60_000);
    await box.fill(HOSTILE);
    await page.click("button[data-operator=follow-up]");
    const sent = page.locator(".detail [data-operator-done]");
    await sent.waitFor();
    assert.match(
      (await sent.textContent())!,
      new RegExp(`^Follow-up 1 sent to the agent of ${taskId}: it reads it at GET /tasks/`),
    );
    await until("the follow-up's work lands", () => exists("follow.txt"), 90_000);
    assert.equal(await Deno.readTextFile(join(root, "follow.txt")), HOSTILE + "\n");

    const listed = page.locator("[data-follow-up]");
    await listed.first().waitFor();
    assert.equal(
      (await listed.first().textContent())!.trim(),
      `${HOSTILE} — dashboard-operator`,
    );
    assert.equal(await page.locator("[data-follow-up] img").count(), 0, "shown as text");
    assert.equal(
      await page.evaluate(() => (globalThis as { __owned?: number }).__owned),
      undefined,
    );
    await page.locator(`[data-column=merged] [data-task-id=${taskId}]`).waitFor({
      timeout: 60_000,
    });
    assert.equal(await box.isDisabled(), true, "a merged task takes no follow-ups");
    await screenshot(page, "operator-follow-up.png");
  } finally {
    await context?.close();
    await cli(root, "stop");
  }
});
