/**
 * Tickets become tasks (through the webhook route, over a real task store): one task per
 * (adapter, ticket key), revised while not started, cancelled when the ticket closes before it
 * starts; roles from `trackers.<name>.role`, the label filter and the label→role map.
 */
import assert from "node:assert/strict";
import { deliver, fixture, webhookWorkspace } from "./_webhooks.ts";

async function github(
  edit: (p: Record<string, unknown> & { issue: Record<string, unknown> }) => void,
) {
  const p = JSON.parse(await fixture("github_issues_opened.json"));
  edit(p);
  return JSON.stringify(p);
}

Deno.test("tickets: an edited ticket revises its not-started task; closing it cancels the task", async () => {
  await using ws = await webhookWorkspace();
  const secret = ws.secret("tracker_b");
  await deliver(ws, "tracker_b", { body: await fixture("github_issues_opened.json"), secret });
  const edited = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "edited";
      p.issue.title = "Parser rejects trailing commas in arrays";
      p.issue.updated_at = "2026-11-20T11:00:00Z";
    }),
  });
  assert.deepEqual(edited.body.tickets, [{
    ref: "octo-org/app#42",
    action: "updated",
    task_id: "tracker_b-octo-org-app-42",
  }]);
  const task = (await ws.call("GET", "/tasks/tracker_b-octo-org-app-42")).body;
  assert.equal(task.title, "Parser rejects trailing commas in arrays");
  assert.match(task.goal, /^Parser rejects trailing commas in arrays\n\n/);
  // An older redelivery does not undo the edit.
  const stale = await deliver(ws, "tracker_b", {
    body: await fixture("github_issues_opened.json"),
    secret,
  });
  assert.equal(stale.body.tickets[0].action, "unchanged");
  const closed = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "closed";
      p.issue.state = "closed";
      p.issue.updated_at = "2026-11-20T12:00:00Z";
    }),
  });
  assert.equal(closed.body.tickets[0].action, "cancelled");
  const after = (await ws.call("GET", "/tasks/tracker_b-octo-org-app-42")).body;
  assert.equal(after.status, "CANCELLED");
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 1);
});

Deno.test("tickets: a started task is left alone when its ticket is edited; closed, its ticket cancels it", async () => {
  await using ws = await webhookWorkspace();
  const secret = ws.secret("tracker_b");
  await deliver(ws, "tracker_b", { body: await fixture("github_issues_opened.json"), secret });
  const claim = await ws.call("POST", "/tasks/tracker_b-octo-org-app-42/claim", {
    session_id: "s1",
  });
  assert.equal(claim.status, 200);
  const edited = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "edited";
      p.issue.title = "Edited while it runs";
      p.issue.updated_at = "2026-11-20T11:00:00Z";
    }),
  });
  assert.deepEqual(edited.body.tickets[0], {
    ref: "octo-org/app#42",
    action: "unchanged",
    task_id: "tracker_b-octo-org-app-42",
    reason: "task is CLAIMED",
  });
  const closed = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "closed";
      p.issue.state = "closed";
      p.issue.updated_at = "2026-11-20T12:00:00Z";
    }),
  });
  assert.deepEqual(closed.body.tickets[0], {
    ref: "octo-org/app#42",
    action: "cancelled",
    task_id: "tracker_b-octo-org-app-42",
  });
  const task = (await ws.call("GET", "/tasks/tracker_b-octo-org-app-42")).body;
  assert.equal(task.status, "CANCELLED");
  assert.equal(task.summary, "ticket octo-org/app#42 was closed in tracker_b");
});

/** Each tracker's delivery closing or deleting the ticket of its created fixture. */
// deno-lint-ignore no-explicit-any -- each tracker's payload has its own shape
type Payload = Record<string, any>;
const CLOSINGS: [string, string, (p: Payload) => void][] = [
  ["tracker_a", "jira_issue_created.json", (p) => p.webhookEvent = "jira:issue_deleted"],
  ["tracker_b", "github_issues_opened.json", (p) => {
    p.action = "closed";
    p.issue.state = "closed";
  }],
  ["tracker_c", "gitlab_issue_open.json", (p) => {
    p.object_attributes.action = "close";
    p.object_attributes.state = "closed";
  }],
  ["tracker_d", "linear_issue_create.json", (p) => p.action = "remove"],
  ["tracker_e", "plane_issue_created.json", (p) => p.action = "deleted"],
];

Deno.test("tickets: on each of the five trackers, a ticket closed or deleted while its task runs cancels the task", async () => {
  await using ws = await webhookWorkspace();
  for (const [tracker, file, close] of CLOSINGS) {
    const secret = ws.secret(tracker);
    const made = await deliver(ws, tracker, { body: await fixture(file), secret });
    const id = made.body.tickets[0].task_id;
    assert.equal((await ws.call("POST", `/tasks/${id}/claim`, { session_id: id })).status, 200);
    const p = JSON.parse(await fixture(file));
    close(p);
    const closed = await deliver(ws, tracker, { body: JSON.stringify(p), secret });
    assert.equal(closed.status, 200, `${tracker}: ${JSON.stringify(closed.body)}`);
    assert.equal(
      closed.body.tickets[0].action,
      "cancelled",
      `${tracker}: ${JSON.stringify(closed.body)}`,
    );
    const task = (await ws.call("GET", `/tasks/${id}`)).body;
    assert.equal(task.status, "CANCELLED", tracker);
    assert.match(task.summary, new RegExp(`^ticket .+ was closed in ${tracker}$`));
  }
});

Deno.test("tickets: a closed ticket without a task creates nothing", async () => {
  await using ws = await webhookWorkspace();
  const r = await deliver(ws, "tracker_b", {
    secret: ws.secret("tracker_b"),
    body: await github((p) => {
      p.issue.state = "closed";
    }),
  });
  assert.equal(r.body.tickets[0].action, "ignored");
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 0);
});

Deno.test("tickets: role, label filter and label→role map from trackers.<name>", async () => {
  await using ws = await webhookWorkspace();
  await Deno.writeTextFile(
    `${ws.root}/service.yaml`,
    (await Deno.readTextFile(`${ws.root}/service.yaml`)).replace(
      `  tracker_b:\n    webhook: { enabled: true, secret_env: ${ws.env.tracker_b} }\n`,
      `  tracker_b:\n    webhook: { enabled: true, secret_env: ${ws.env.tracker_b} }\n` +
        `    role: backend\n    labels: [agent, Ready]\n    label_roles: { test: qa, bug: qa }\n`,
    ),
  );
  const secret = ws.secret("tracker_b");
  const bug = await deliver(ws, "tracker_b", {
    body: await fixture("github_issues_opened.json"),
    secret,
  });
  assert.equal(bug.body.tickets[0].action, "created");
  assert.equal((await ws.call("GET", `/tasks/${bug.body.tickets[0].task_id}`)).body.role, "qa");
  const plain = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.issue.number = 43;
      p.issue.labels = [{ name: "ready" }];
    }),
  });
  assert.equal(
    (await ws.call("GET", `/tasks/${plain.body.tickets[0].task_id}`)).body.role,
    "backend",
  );
  const unlabelled = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.issue.number = 44;
      p.issue.labels = [{ name: "question" }];
    }),
  });
  assert.deepEqual(unlabelled.body.tickets[0], {
    ref: "octo-org/app#44",
    action: "ignored",
    reason: "carries none of the labels agent, Ready",
  });
});

Deno.test("tickets: the five trackers' real payloads each become one task keeping the ticket URL", async () => {
  await using ws = await webhookWorkspace();
  const cases: [string, string, string][] = [
    ["tracker_a", "jira_issue_created.json", "https://acme.atlassian.net/browse/PROJ-7"],
    ["tracker_b", "github_issues_opened.json", "https://github.com/octo-org/app/issues/42"],
    [
      "tracker_c",
      "gitlab_issue_open.json",
      "http://gitlab.example.test/gitlabhq/gitlab-test/-/issues/23",
    ],
    [
      "tracker_d",
      "linear_issue_create.json",
      "https://linear.app/acme/issue/ENG-12/rate-limit-the-login-endpoint",
    ],
    [
      "tracker_e",
      "plane_issue_created.json",
      "https://app.plane.so/acme/projects/4af68566-94a4-4eb3-94aa-50dc9427067b/issues/a8f5c2d1-0000-4000-8000-000000000042",
    ],
  ];
  for (const [tracker, file, url] of cases) {
    const r = await deliver(ws, tracker, { body: await fixture(file), secret: ws.secret(tracker) });
    assert.equal(r.status, 200, `${tracker}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.tickets[0].action, "created", tracker);
    const task = (await ws.call("GET", `/tasks/${r.body.tickets[0].task_id}`)).body;
    assert.equal(task.source.url, url, tracker);
    assert.equal(task.source.tracker, tracker);
    assert.equal(task.status, "OPEN");
  }
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 5);
});

Deno.test("tickets: a ticket closed and then reopened brings back its cancelled task, a new attempt", async () => {
  await using ws = await webhookWorkspace();
  const secret = ws.secret("tracker_b");
  await deliver(ws, "tracker_b", { body: await fixture("github_issues_opened.json"), secret });
  const id = "tracker_b-octo-org-app-42";
  await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "closed";
      p.issue.state = "closed";
      p.issue.updated_at = "2026-11-20T12:00:00Z";
    }),
  });
  assert.equal((await ws.call("GET", `/tasks/${id}`)).body.status, "CANCELLED");
  const reopened = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "reopened";
      p.issue.title = "Parser rejects trailing commas (still)";
      p.issue.updated_at = "2026-11-20T13:00:00Z";
    }),
  });
  assert.deepEqual(reopened.body.tickets, [{
    ref: "octo-org/app#42",
    action: "reopened",
    task_id: id,
  }]);
  const task = (await ws.call("GET", `/tasks/${id}`)).body;
  assert.equal(task.status, "OPEN");
  assert.equal(task.attempts, 0);
  assert.equal(task.summary, "ticket octo-org/app#42 was reopened in tracker_b");
  assert.equal(task.title, "Parser rejects trailing commas (still)");
  // A late copy of the closing (older than the reopen) does not cancel it again.
  const late = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "closed";
      p.issue.state = "closed";
      p.issue.updated_at = "2026-11-20T12:00:00Z";
    }),
  });
  assert.equal(late.body.tickets[0].action, "unchanged");
  assert.equal((await ws.call("GET", `/tasks/${id}`)).body.status, "OPEN");
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 1);
});

Deno.test("tickets: an operator's cancel stays: an open ticket's later edit does not bring the task back", async () => {
  await using ws = await webhookWorkspace();
  const secret = ws.secret("tracker_b");
  await deliver(ws, "tracker_b", { body: await fixture("github_issues_opened.json"), secret });
  const id = "tracker_b-octo-org-app-42";
  const cancel = await ws.call("POST", `/tasks/${id}/cancel`, {
    operator: true,
    reason: "not now",
  });
  assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
  const edited = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "edited";
      p.issue.updated_at = "2026-11-20T13:00:00Z";
    }),
  });
  assert.deepEqual(edited.body.tickets[0], {
    ref: "octo-org/app#42",
    action: "unchanged",
    task_id: id,
    reason: "task is CANCELLED",
  });
  assert.equal((await ws.call("GET", `/tasks/${id}`)).body.status, "CANCELLED");
});

Deno.test("tickets: an edit of a ticket whose task FAILED gives it a new attempt at the new text; an edit that asks nothing new says how to get one", async () => {
  await using ws = await webhookWorkspace();
  const secret = ws.secret("tracker_b");
  const id = "tracker_b-octo-org-app-42";
  await deliver(ws, "tracker_b", { body: await fixture("github_issues_opened.json"), secret });
  assert.equal((await ws.call("POST", `/tasks/${id}/claim`, { session_id: "s1" })).status, 200);
  const failed = await ws.call("POST", `/tasks/${id}/fail`, {
    session_id: "s1",
    reason: "the goal is unclear",
  });
  assert.equal(failed.status, 200, JSON.stringify(failed.body));
  const labelled = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "labeled";
      p.issue.updated_at = "2026-11-20T11:00:00Z";
    }),
  });
  assert.equal(labelled.body.tickets[0].action, "unchanged");
  assert.match(labelled.body.tickets[0].reason, /^task is FAILED: a new attempt follows an edit/);
  const edited = await deliver(ws, "tracker_b", {
    secret,
    body: await github((p) => {
      p.action = "edited";
      p.issue.body = "Accept a trailing comma in arrays and objects.";
      p.issue.updated_at = "2026-11-20T12:00:00Z";
    }),
  });
  assert.deepEqual(edited.body.tickets[0], {
    ref: "octo-org/app#42",
    action: "retried",
    task_id: id,
  });
  const task = (await ws.call("GET", `/tasks/${id}`)).body;
  assert.equal(task.status, "OPEN");
  assert.equal(task.attempts, 0);
  assert.match(task.goal, /Accept a trailing comma in arrays and objects\./);
  assert.equal(task.summary, "ticket octo-org/app#42 was edited in tracker_b");
});
