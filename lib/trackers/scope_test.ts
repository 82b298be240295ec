/** The project scope of the five built-in trackers: tickets in, tickets out, write-back refused. */
import assert from "node:assert/strict";
import { BUILTIN_TRACKERS } from "./builtin.ts";
import { hostEventOutside, outsideProject, writeBackRefusal } from "./scope.ts";
import type { TicketIdentity } from "./ticket.ts";

const PLANE = "4af68566-94a4-4eb3-94aa-50dc9427067b";

/** [tracker, configured project, a ticket in it, a ticket of another project, what that one names]. */
const CASES: [string, string, TicketIdentity, TicketIdentity, string][] = [
  [
    "tracker_a",
    "PROJ",
    { ref: "PROJ-7", ids: { key: "PROJ-7", id: "10002", project: "PROJ" } },
    { ref: "OPS-7", ids: { key: "OPS-7", id: "10003", project: "OPS" } },
    "OPS",
  ],
  [
    "tracker_b",
    "octo-org/app",
    { ref: "Octo-Org/App#1", ids: { repo: "Octo-Org/App", number: 1 } },
    { ref: "evil/app#1", ids: { repo: "evil/app", number: 1 } },
    "evil/app",
  ],
  [
    "tracker_c",
    "group/app",
    { ref: "group/app#3", ids: { project_id: 15, iid: 3 } },
    { ref: "group/other#3", ids: { project_id: 16, iid: 3 } },
    "group/other",
  ],
  [
    "tracker_c",
    "15",
    { ref: "group/app#3", ids: { project_id: 15, iid: 3 } },
    { ref: "group/other#3", ids: { project_id: 16, iid: 3 } },
    "group/other",
  ],
  [
    "tracker_d",
    "ENG",
    { ref: "ENG-12", ids: { id: "u1", team: "ENG" } },
    { ref: "OPS-12", ids: { id: "u2", team: "OPS" } },
    "OPS",
  ],
  [
    "tracker_d",
    "ENG",
    { ref: "ENG-12", ids: { id: "u1" } }, // polled: the identifier names the team
    { ref: "u2", ids: { id: "u2" } }, // no identifier, no team: cannot be shown to be in ENG
    "",
  ],
  [
    "tracker_e",
    `acme/${PLANE}`,
    { ref: "WEB-1", ids: { project: PLANE, id: "i1" } },
    { ref: "WEB-1", ids: { project: "00000000-0000-0000-0000-000000000000", id: "i2" } },
    "00000000-0000-0000-0000-000000000000",
  ],
];

Deno.test("outsideProject(): each tracker takes its configured project's tickets and only those", () => {
  for (const [tracker, project, mine, theirs, named] of CASES) {
    const s = { name: tracker, adapter: BUILTIN_TRACKERS.get(tracker)!, project };
    assert.equal(outsideProject(s, mine), undefined, `${tracker} ${project}: ${mine.ref}`);
    const reason = outsideProject(s, theirs);
    assert.ok(reason, `${tracker} ${project}: ${theirs.ref} should be outside`);
    assert.ok(reason.includes(`trackers.${tracker}.project (${project})`), reason);
    if (named) assert.ok(reason.includes(`in ${named}`), reason);
    // Write-back follows the same rule.
    assert.equal(writeBackRefusal(s, mine), undefined);
    assert.equal(writeBackRefusal(s, theirs), reason);
  }
});

Deno.test("outsideProject(): without a project every ticket is taken, but nothing is written back", () => {
  const s = { name: "tracker_b", adapter: BUILTIN_TRACKERS.get("tracker_b")! };
  const ticket = { ref: "evil/app#1", ids: { repo: "evil/app", number: 1 } };
  assert.equal(outsideProject(s, ticket), undefined);
  assert.match(writeBackRefusal(s, ticket)!, /trackers\.tracker_b\.project is not set/);
  // A tracker added with a module decides in its own handler.
  assert.equal(outsideProject({ name: "acme", project: "X" }, ticket), undefined);
});

Deno.test("hostEventOutside(): a pull-request event is taken only when it names the tracker's project or landing.repo", () => {
  const keys = { numbers: "", shas: "", branches: "", merged_into: "" };
  const gh = (repo: string) => ({ provider: "github" as const, repo, project_id: 1, ...keys });
  const gl = (repo: string, id: number) => ({
    provider: "gitlab" as const,
    repo,
    project_id: id,
    ...keys,
  });
  const b = { name: "tracker_b", project: "octo-org/app" };
  const c = { name: "tracker_c", project: "group/app" };
  const byId = { name: "tracker_c", project: "15" };
  /** [tracker settings, landing, event, taken]. */
  const CASES: [
    { name: string; project?: string },
    { provider: string; repo: string } | undefined,
    ReturnType<typeof gh> | ReturnType<typeof gl>,
    boolean,
  ][] = [
    [b, undefined, gh("octo-org/app"), true],
    [b, undefined, gh("Octo-Org/App"), true],
    [b, undefined, gh("stranger/elsewhere"), false],
    [b, undefined, gh("octo-org/app-fork"), false],
    [b, undefined, gh(""), false],
    [{ name: "tracker_b" }, { provider: "github", repo: "octo-org/app" }, gh("octo-org/app"), true],
    [{ name: "tracker_b" }, { provider: "github", repo: "octo-org/app" }, gh("evil/app"), false],
    // Issues in one repository, pull requests in another: both are the user's.
    [b, { provider: "github", repo: "octo-org/site" }, gh("octo-org/site"), true],
    [b, { provider: "github", repo: "octo-org/site" }, gh("evil/site"), false],
    // A landing on the other provider says nothing about this one's events.
    [{ name: "tracker_b" }, { provider: "gitlab", repo: "octo-org/app" }, gh("evil/app"), true],
    [{ name: "tracker_b" }, undefined, gh("anyone/at-all"), true],
    [c, undefined, gl("group/app", 15), true],
    [c, undefined, gl("group/other", 16), false],
    [byId, undefined, gl("group/app", 15), true],
    [byId, undefined, gl("group/other", 16), false],
    [{ name: "tracker_c" }, { provider: "gitlab", repo: "15" }, gl("group/app", 15), true],
    [{ name: "tracker_c" }, { provider: "gitlab", repo: "15" }, gl("group/app", 0), false],
  ];
  for (const [s, landing, event, taken] of CASES) {
    const why = hostEventOutside(s, event, landing);
    const label = `${JSON.stringify(s)} ${JSON.stringify(landing)} ${event.repo}`;
    if (taken) assert.equal(why, undefined, label);
    else {
      assert.ok(why, `${label} should be outside`);
      assert.ok(why.includes(event.repo || "no repository"), why);
      if (s.project) assert.ok(why.includes(`trackers.${s.name}.project (${s.project})`), why);
    }
  }
});
