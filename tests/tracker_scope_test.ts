/**
 * Only your project (through the webhook route, over a real task store): a signed delivery about
 * a ticket of another project than `trackers.<name>.project` answers 200 `ignored` with the
 * reason and writes nothing — no task, no ledger key — for each of the five trackers.
 */
import assert from "node:assert/strict";
import { deliver, fixture, webhookWorkspace } from "./_webhooks.ts";

const PLANE = "4af68566-94a4-4eb3-94aa-50dc9427067b";

/** tracker → [fixture, configured project, the fixture moved to another project]. */
// deno-lint-ignore no-explicit-any
const CASES: Record<string, [string, string, (p: any) => void]> = {
  tracker_a: ["jira_issue_created.json", "PROJ", (p) => {
    p.issue.key = "OPS-7";
    p.issue.id = "20002";
    p.issue.fields.project = { id: "10001", key: "OPS", name: "Operations" };
  }],
  tracker_b: ["github_issues_opened.json", "octo-org/app", (p) => {
    p.repository.full_name = "stranger/elsewhere";
  }],
  tracker_c: ["gitlab_issue_open.json", "gitlabhq/gitlab-test", (p) => {
    p.project.path_with_namespace = "stranger/elsewhere";
    p.project.id = 99;
  }],
  tracker_d: ["linear_issue_create.json", "ENG", (p) => {
    p.data.id = "9f1c0000-0000-4000-8000-000000000099";
    p.data.identifier = "OPS-12";
    p.data.team = { id: "t-ops", key: "OPS", name: "Operations" };
  }],
  tracker_e: ["plane_issue_created.json", `acme/${PLANE}`, (p) => {
    p.data.id = "b0000000-0000-4000-8000-000000000099";
    p.data.project = "00000000-0000-4000-8000-000000000000";
  }],
};

Deno.test("only your project: a signed delivery from another project answers ignored and writes nothing, on each tracker", async () => {
  const projects = Object.fromEntries(Object.entries(CASES).map(([t, [, p]]) => [t, p]));
  await using ws = await webhookWorkspace("", { projects });
  const taskCount = async () => (await ws.call("GET", "/tasks")).body.tasks.length;
  let made = 0;
  for (const [tracker, [file, project, move]] of Object.entries(CASES)) {
    const secret = ws.secret(tracker);
    const foreign = JSON.parse(await fixture(file));
    move(foreign);
    const id = `foreign-${tracker}`;
    const r = await deliver(ws, tracker, { body: JSON.stringify(foreign), secret, id });
    assert.equal(r.status, 200, `${tracker}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.status, "ignored", tracker);
    assert.equal(r.body.tickets, undefined, tracker);
    assert.ok(
      r.body.reason.includes(`not in trackers.${tracker}.project (${project})`),
      `${tracker}: ${r.body.reason}`,
    );
    assert.equal(await taskCount(), made, `${tracker}: no task from the other project`);
    // Nothing was recorded: the same delivery id about a ticket of the project is accepted.
    const mine = await deliver(ws, tracker, { body: await fixture(file), secret, id });
    assert.equal(mine.body.status, "accepted", `${tracker}: ${JSON.stringify(mine.body)}`);
    assert.equal(mine.body.tickets[0].action, "created", tracker);
    assert.equal(await taskCount(), ++made, tracker);
  }
});

Deno.test("only your project: integrations list remembers an ignored delivery with its reason", async () => {
  await using ws = await webhookWorkspace("", { projects: { tracker_b: "octo-org/app" } });
  const foreign = JSON.parse(await fixture("github_issues_opened.json"));
  foreign.repository.full_name = "stranger/elsewhere";
  await deliver(ws, "tracker_b", { body: JSON.stringify(foreign), secret: ws.secret("tracker_b") });
  await ws.flush();
  const state = JSON.parse(await Deno.readTextFile(`${ws.root}/.sdd/runtime/trackers.json`));
  assert.equal(state.tracker_b.last_delivery.outcome, "ignored");
  assert.match(
    state.tracker_b.last_delivery.detail,
    /stranger\/elsewhere#42 is in stranger\/elsewhere/,
  );
});

Deno.test("only your project: a pull-request or check webhook about another repository answers ignored and wakes no landing, GitHub and GitLab", async () => {
  const { activityHub } = await import("../lib/events/hub.ts");
  const { HOST_EVENT_ACTIVITY } = await import("../lib/webhooks/handler.ts");
  await using ws = await webhookWorkspace("", {
    projects: { tracker_b: "octo-org/app", tracker_c: "gitlabhq/gitlab-test" },
  });
  const woken: string[] = [];
  const stop = activityHub.subscribe((a) => {
    if (a.kind === HOST_EVENT_ACTIVITY) woken.push(String(a.detail.repo));
  });
  try {
    const github = (repo: string, id: number) => ({ repository: { full_name: repo, id } });
    const gitlab = (kind: string, path: string, id: number) => ({
      object_kind: kind,
      project: { path_with_namespace: path, id },
      object_attributes: { iid: 1, id: 1, state: "opened" },
    });
    /** [tracker, event header, payload of another repository, the same of the project]. */
    const CASES: [string, string | null, unknown, unknown][] = [
      [
        "tracker_b",
        "pull_request",
        { action: "synchronize", number: 1, ...github("stranger/elsewhere", 9) },
        { action: "synchronize", number: 1, ...github("octo-org/app", 1) },
      ],
      [
        "tracker_b",
        "check_run",
        { action: "completed", check_run: { id: 1 }, ...github("stranger/elsewhere", 9) },
        { action: "completed", check_run: { id: 1 }, ...github("Octo-Org/App", 1) },
      ],
      [
        "tracker_c",
        null,
        gitlab("merge_request", "stranger/elsewhere", 99),
        gitlab("merge_request", "gitlabhq/gitlab-test", 1),
      ],
      [
        "tracker_c",
        null,
        gitlab("pipeline", "stranger/elsewhere", 99),
        gitlab("pipeline", "gitlabhq/gitlab-test", 1),
      ],
    ];
    for (const [i, [tracker, event, theirs, mine]] of CASES.entries()) {
      const secret = ws.secret(tracker);
      const id = `pr-${i}`;
      const headers: Record<string, string> = event ? { "X-GitHub-Event": event } : {};
      const what = `${tracker} ${event ?? (theirs as { object_kind: string }).object_kind}`;
      woken.length = 0;
      const r = await deliver(ws, tracker, { body: JSON.stringify(theirs), secret, id, headers });
      assert.equal(r.status, 200, `${what}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.status, "ignored", `${what}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.reason, /stranger\/elsewhere, not of trackers\.tracker_[bc]\.project/);
      assert.deepEqual(woken, [], `${what}: the landing was woken by another repository`);
      // Not recorded: the same delivery id about the project is accepted and wakes the landing.
      const ok = await deliver(ws, tracker, { body: JSON.stringify(mine), secret, id, headers });
      assert.equal(ok.body.status, "accepted", `${what}: ${JSON.stringify(ok.body)}`);
      assert.equal(woken.length, 1, `${what}: the project's event woke nothing`);
    }
    assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 0);
  } finally {
    stop();
  }
});
