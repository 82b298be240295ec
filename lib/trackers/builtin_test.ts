/** Each built-in tracker's real webhook payloads (tests/fixtures/trackers) as normalised tickets. */
import assert from "node:assert/strict";
import { handlerFor } from "../webhooks/registry.ts";
import { BUILTIN_TRACKERS } from "./builtin.ts";
import type { Ticket } from "./ticket.ts";

const FIXTURES = new URL("../../tests/fixtures/trackers/", import.meta.url);

/** Each built-in tracker's webhook handler, by adapter name. */
const BUILTIN_HANDLERS = new Map([...BUILTIN_TRACKERS].map(([name, a]) => [name, a.webhook]));

async function ticketsOf(
  tracker: string,
  file: string,
  // deno-lint-ignore no-explicit-any
  edit: (p: Record<string, any>) => void = () => {},
  headers: Record<string, string> = {},
  context: { project?: string; apiUrl?: string } = {},
): Promise<Ticket[]> {
  const payload = JSON.parse(await Deno.readTextFile(new URL(file, FIXTURES)));
  edit(payload);
  const handler = BUILTIN_HANDLERS.get(tracker)!;
  return handler.tickets(payload, new Headers(headers), { tracker, ...context });
}

Deno.test("tracker_a (Jira jira:issue_created) → ticket", async () => {
  const [t] = await ticketsOf("tracker_a", "jira_issue_created.json");
  assert.deepEqual(t, {
    tracker: "tracker_a",
    key: "10002",
    ref: "PROJ-7",
    title: "Export fails on empty board",
    body: "Steps: open an empty board, click Export.\nExpected a CSV with a header row.",
    labels: ["backend", "agent"],
    state: "open",
    url: "https://acme.atlassian.net/browse/PROJ-7",
    raw: {
      updated_at: "2026-11-20T09:00:00.000Z",
      ids: { key: "PROJ-7", id: "10002", project: "PROJ" },
    },
  });
  const [done] = await ticketsOf("tracker_a", "jira_issue_created.json", (p) => {
    p.webhookEvent = "jira:issue_updated";
    p.issue.fields.status.statusCategory.key = "done";
  });
  assert.equal(done.state, "closed");
  const [deleted] = await ticketsOf("tracker_a", "jira_issue_created.json", (p) => {
    p.webhookEvent = "jira:issue_deleted";
  });
  assert.equal(deleted.state, "closed");
  assert.deepEqual(
    await ticketsOf("tracker_a", "jira_issue_created.json", (p) => {
      p.webhookEvent = "comment_created";
    }),
    [],
  );
});

Deno.test("tracker_b (GitHub issues event) → ticket; pull requests, other events and unnamed events ignored", async () => {
  const [t] = await ticketsOf("tracker_b", "github_issues_opened.json", undefined, {
    "X-GitHub-Event": "issues",
  });
  assert.deepEqual(t, {
    tracker: "tracker_b",
    key: "octo-org/app#42",
    ref: "octo-org/app#42",
    title: "Parser rejects trailing commas",
    body: '`parse("[1,2,]")` throws. It should accept a trailing comma.',
    labels: ["bug", "agent"],
    state: "open",
    url: "https://github.com/octo-org/app/issues/42",
    raw: { updated_at: "2026-11-20T10:00:00.000Z", ids: { repo: "octo-org/app", number: 42 } },
  });
  const [closed] = await ticketsOf("tracker_b", "github_issues_opened.json", (p) => {
    p.action = "closed";
    p.issue.state = "closed";
  }, { "X-GitHub-Event": "issues" });
  assert.equal(closed.state, "closed");
  // GitHub names every event: a body that looks like an issue event, sent without the name, is not one.
  assert.deepEqual(await ticketsOf("tracker_b", "github_issues_opened.json"), []);
  assert.deepEqual(
    await ticketsOf("tracker_b", "github_issues_opened.json", undefined, {
      "X-GitHub-Event": "issue_comment",
    }),
    [],
  );
  assert.deepEqual(await ticketsOf("tracker_b", "github_ping.json"), []);
});

Deno.test("tracker_c (GitLab issue hook) → ticket; close action closes", async () => {
  const [t] = await ticketsOf("tracker_c", "gitlab_issue_open.json");
  assert.deepEqual(t, {
    tracker: "tracker_c",
    key: "gitlabhq/gitlab-test#23",
    ref: "gitlabhq/gitlab-test#23",
    title: "New API: create/update/delete file",
    body: "Create new API for manipulations with repository",
    labels: ["API"],
    state: "open",
    url: "http://gitlab.example.test/gitlabhq/gitlab-test/-/issues/23",
    raw: { updated_at: "2026-11-20T10:05:00.000Z", ids: { project_id: 15, iid: 23 } },
  });
  const [closed] = await ticketsOf("tracker_c", "gitlab_issue_open.json", (p) => {
    p.object_attributes.action = "close";
    p.object_attributes.state = "closed";
  });
  assert.equal(closed.state, "closed");
  assert.deepEqual(
    await ticketsOf("tracker_c", "gitlab_issue_open.json", (p) => {
      p.object_kind = "note";
    }),
    [],
  );
});

Deno.test("tracker_d (Linear Issue data change) → ticket; other models ignored", async () => {
  const [t] = await ticketsOf("tracker_d", "linear_issue_create.json");
  assert.deepEqual(t, {
    tracker: "tracker_d",
    key: "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9",
    ref: "ENG-12",
    title: "Rate-limit the login endpoint",
    body: "Five attempts per minute per IP.",
    labels: ["security"],
    state: "open",
    url: "https://linear.app/acme/issue/ENG-12/rate-limit-the-login-endpoint",
    raw: {
      updated_at: "2026-11-20T10:00:00.000Z",
      ids: { id: "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9", team: "ENG" },
    },
  });
  const [done] = await ticketsOf("tracker_d", "linear_issue_create.json", (p) => {
    p.action = "update";
    p.data.state.type = "completed";
  });
  assert.equal(done.state, "closed");
  assert.deepEqual(
    await ticketsOf("tracker_d", "linear_issue_create.json", (p) => {
      p.type = "Comment";
    }),
    [],
  );
});

Deno.test("tracker_e (Plane issue event, v1 and v2) → ticket; other events ignored", async () => {
  const project = "acme/4af68566-94a4-4eb3-94aa-50dc9427067b";
  const [t] = await ticketsOf("tracker_e", "plane_issue_created.json", undefined, {}, { project });
  assert.deepEqual(t, {
    tracker: "tracker_e",
    key: "a8f5c2d1-0000-4000-8000-000000000042",
    ref: "issue-42",
    title: "Add dark mode to settings",
    body: "Users want a dark theme. settings page",
    labels: ["frontend"],
    state: "open",
    url:
      "https://app.plane.so/acme/projects/4af68566-94a4-4eb3-94aa-50dc9427067b/issues/a8f5c2d1-0000-4000-8000-000000000042",
    raw: {
      updated_at: "2026-11-20T10:00:00.000Z",
      ids: {
        project: "4af68566-94a4-4eb3-94aa-50dc9427067b",
        id: "a8f5c2d1-0000-4000-8000-000000000042",
      },
    },
  });
  const [v2] = await ticketsOf(
    "tracker_e",
    "plane_issue_created.json",
    (p) => {
      p.event = "workitem.deleted";
      delete p.action;
      p.data.identifier = "WEB-42";
    },
    {},
    { project },
  );
  assert.equal(v2.state, "closed");
  assert.equal(v2.ref, "WEB-42");
  assert.deepEqual(
    await ticketsOf("tracker_e", "plane_issue_created.json", (p) => {
      p.event = "project";
    }),
    [],
  );
});

Deno.test("handlers never throw on hostile payloads", () => {
  const hostile: unknown[] = [
    null,
    1,
    "x",
    [],
    {},
    { issue: 5 },
    { data: [] },
    {
      object_kind: "issue",
      object_attributes: null,
    },
    { webhookEvent: "jira:issue_created", issue: { key: {} } },
    { type: "Issue", data: "x" },
    {
      event: "issue",
      data: { id: {} },
    },
  ];
  for (const [name, handler] of BUILTIN_HANDLERS) {
    for (const payload of hostile) {
      const out = handler.tickets(payload, new Headers(), { tracker: name });
      assert.ok(Array.isArray(out), `${name} ${JSON.stringify(payload)}`);
    }
  }
});

Deno.test("the five built-in handlers are registered with the receiver on import", () => {
  assert.deepEqual([...BUILTIN_HANDLERS.keys()], [
    "tracker_a",
    "tracker_b",
    "tracker_c",
    "tracker_d",
    "tracker_e",
  ]);
  for (const [name, handler] of BUILTIN_HANDLERS) assert.equal(handlerFor(name), handler);
});

Deno.test("docs/trackers.md lists each built-in handler's signature and delivery headers, exactly", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/trackers.md", import.meta.url));
  const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  for (const [name, handler] of BUILTIN_HANDLERS) {
    const row = doc.split("\n").find((l) => l.startsWith(`| \`${name}\` |`));
    assert.ok(row, `no webhook table row for ${name}`);
    const [, , signature, , delivery] = row.split("|").map((c) => c.trim());
    assert.deepEqual(names(signature), handler.signatureHeaders, `${name} signature headers`);
    assert.deepEqual(names(delivery), handler.deliveryHeaders, `${name} delivery headers`);
  }
});
