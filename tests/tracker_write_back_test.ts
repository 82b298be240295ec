/**
 * Write-back (`comment_on_land`) against the stand-in GitHub API: a landing comment that failed
 * because the tracker was down is retried from the outbox with back-off until it is posted —
 * exactly once per landing, also across a restart — and a comment never goes outside the
 * configured project.
 */
import assert from "node:assert/strict";
import { closeTrackerService, trackerServiceFor } from "../lib/trackers/service.ts";
import { taskStoreFor } from "../lib/tasks/registry.ts";
import { TaskInputSchema } from "../lib/tasks/task.ts";
import { completionVerdict } from "../lib/verification/verdict.ts";
import { startFakeTrackerApis } from "./_tracker_apis.ts";
import { testWorkspace } from "./_workspace.ts";
import { deliver, fixture } from "./_webhooks.ts";

async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("write-back: a comment that failed while the tracker was down is retried and posted exactly once per landing, also across a restart", async () => {
  await using fake = startFakeTrackerApis([]);
  const tag = `${Deno.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const secretVar = `WH_WB_${tag}`;
  const tokenVar = `TRK_WB_TOKEN_${tag}`;
  Deno.env.set(secretVar, "wb-secret");
  Deno.env.set(tokenVar, "gh-token");
  await using ws = await testWorkspace({
    config: "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n    project: octo-org/app\n" +
      `    polling: false\n    api_url: ${fake.url}\n    token_env: ${tokenVar}\n` +
      `    comment_on_land: true\n    webhook: { enabled: true, secret_env: ${secretVar} }\n`,
  });
  const open = () => trackerServiceFor(ws.ctx, { commentRetryDelayMs: 20 });
  const posts = () => fake.requests.filter((r) => r.method === "POST").length;
  const land = async (number: number, title: string) => {
    const p = JSON.parse(await fixture("github_issues_opened.json"));
    p.issue.number = number;
    p.issue.title = title;
    const r = await deliver(ws, "tracker_b", { body: JSON.stringify(p), secret: "wb-secret" });
    const id = r.body.tickets[0].task_id;
    assert.equal(
      (await ws.call("POST", `/tasks/${id}/claim`, { session_id: `s${number}` })).status,
      200,
    );
    assert.equal(
      (await ws.call("POST", `/tasks/${id}/complete`, { session_id: `s${number}` })).status,
      200,
    );
    await (await taskStoreFor(ws.ctx)).markMerged(id);
    return id;
  };
  try {
    await open();
    // The tracker answers 503 twice, then comes back: the third try posts the comment.
    fake.failNext.push({ status: 503 }, { status: 502 });
    await land(42, "First");
    await until("the first comment", () => fake.comments.length === 1);
    assert.equal(posts(), 3);
    assert.equal(fake.comments[0].path, "/repos/octo-org/app/issues/42/comments");
    assert.match(
      JSON.parse(fake.comments[0].body).body,
      /^Landed: task `tracker_b-octo-org-app-42` was verified and merged\./,
    );

    // Down again; the service stops before the tracker comes back.
    for (let i = 0; i < 50; i++) fake.failNext.push({ status: 503 });
    const service = await open();
    await land(43, "Second");
    await until(
      "a failed try of the second comment",
      () => service.runtime.get("tracker_b").last_comment?.outcome === "pending",
    );
    assert.match(
      service.runtime.get("tracker_b").last_comment!.detail!,
      /cannot comment on octo-org\/app#43 \(try 1\): .*HTTP 503.*; trying again at /,
    );
    await closeTrackerService(ws.ctx);
    assert.equal(fake.comments.length, 1);
    const box = JSON.parse(await Deno.readTextFile(`${ws.root}/.sdd/runtime/tracker_outbox.json`));
    assert.deepEqual(box.entries.map((e: { state: string }) => e.state), ["sent", "pending"]);

    // The tracker is back; the next start sends what the outbox holds, once.
    fake.failNext.length = 0;
    await open();
    await until("the second comment, after the restart", () => fake.comments.length === 2);
    assert.equal(fake.comments[1].path, "/repos/octo-org/app/issues/43/comments");
    await closeTrackerService(ws.ctx);
    const sent = posts();
    await open(); // a start with nothing pending posts nothing
    await closeTrackerService(ws.ctx);
    assert.equal(posts(), sent);
    assert.equal(fake.comments.length, 2);
  } finally {
    Deno.env.delete(secretVar);
    Deno.env.delete(tokenVar);
  }
});

Deno.test("write-back: a landing is in the outbox on disk while the tracker still holds an earlier comment, so a kill meanwhile loses nothing", async () => {
  await using fake = startFakeTrackerApis([]);
  const tag = `${Deno.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const tokenVar = `TRK_WB3_TOKEN_${tag}`;
  Deno.env.set(tokenVar, "gh-token");
  await using ws = await testWorkspace({
    config: "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n    project: octo-org/app\n" +
      `    polling: false\n    api_url: ${fake.url}\n    token_env: ${tokenVar}\n` +
      "    comment_on_land: true\n",
  });
  const release = Promise.withResolvers<void>();
  try {
    await trackerServiceFor(ws.ctx, { commentRetryDelayMs: 20 });
    const store = await taskStoreFor(ws.ctx);
    const land = async (number: number) => {
      const [task] = await store.create([TaskInputSchema.parse({
        title: `ticket ${number}`,
        role: "backend",
        source: {
          tracker: "tracker_b",
          key: `octo-org/app#${number}`,
          ref: `octo-org/app#${number}`,
          url: `https://github.com/octo-org/app/issues/${number}`,
          ids: { repo: "octo-org/app", number },
        },
      })]);
      await store.claim(task.id, `s${number}`);
      await store.complete(task.id, {}, completionVerdict(ws.ctx.paths));
      await store.markMerged(task.id);
      return task.id;
    };
    const onDisk = async () => {
      const text = await Deno.readTextFile(`${ws.root}/.sdd/runtime/tracker_outbox.json`)
        .catch(() => '{"entries":[]}');
      return JSON.parse(text).entries.map((e: { task_id: string }) => e.task_id);
    };
    // The tracker takes the first comment and does not answer (down behind a proxy, timing out).
    fake.hold = release.promise;
    const first = await land(1);
    await until("the first comment's call", () => fake.requests.length === 1);
    const second = await land(2);
    await until("the second landing on disk", async () => (await onDisk()).includes(second));
    assert.deepEqual(await onDisk(), [first, second]);
    assert.equal(fake.comments.length, 0, "the tracker answered nothing yet");
    fake.hold = undefined;
    release.resolve();
    await until("both comments", () => fake.comments.length === 2);
    await closeTrackerService(ws.ctx);
    assert.deepEqual(fake.comments.map((c) => c.path), [
      "/repos/octo-org/app/issues/1/comments",
      "/repos/octo-org/app/issues/2/comments",
    ]);
  } finally {
    release.resolve();
    Deno.env.delete(tokenVar);
  }
});

Deno.test("write-back: a task whose ticket is outside the configured project is never commented on", async () => {
  await using fake = startFakeTrackerApis([]);
  const tokenVar = `TRK_WB2_TOKEN_${Deno.pid}`;
  Deno.env.set(tokenVar, "gh-token");
  await using ws = await testWorkspace({
    config: "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n    project: octo-org/app\n" +
      `    polling: false\n    api_url: ${fake.url}\n    token_env: ${tokenVar}\n` +
      "    comment_on_land: true\n",
  });
  try {
    const service = await trackerServiceFor(ws.ctx, { commentRetryDelayMs: 20 });
    const store = await taskStoreFor(ws.ctx);
    // A task made from another repository's ticket (before tickets were scoped to the project).
    const [task] = await store.create([TaskInputSchema.parse({
      title: "stranger's ticket",
      role: "backend",
      source: {
        tracker: "tracker_b",
        key: "stranger/elsewhere#1",
        ref: "stranger/elsewhere#1",
        url: "https://github.com/stranger/elsewhere/issues/1",
        ids: { repo: "stranger/elsewhere", number: 1 },
      },
    })]);
    await store.claim(task.id, "s1");
    await store.complete(task.id, {}, completionVerdict(ws.ctx.paths));
    await store.markMerged(task.id);
    await until(
      "the refusal",
      () => service.runtime.get("tracker_b").last_comment?.outcome === "refused",
    );
    assert.match(
      service.runtime.get("tracker_b").last_comment!.detail!,
      /stranger\/elsewhere#1 is in stranger\/elsewhere, not in trackers\.tracker_b\.project \(octo-org\/app\)/,
    );
    await closeTrackerService(ws.ctx);
    assert.equal(fake.requests.length, 0, "no call to the tracker at all");
  } finally {
    Deno.env.delete(tokenVar);
  }
});
