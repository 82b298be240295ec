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
