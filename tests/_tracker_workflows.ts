/**
 * The stand-in trackers' workflows (tests/_tracker_apis.ts serves them): reading one issue and
 * moving it, in each tracker's wire format — GitHub issue, labels and `PATCH` with `state` and
 * `state_reason`; GitLab issue, project labels and `PUT` with `add_labels`, `remove_labels`,
 * `state_event`; Jira issue status, `transitions` and `POST …/transitions` (204); Linear
 * `issue`, `workflowStates` and `issueUpdate`; Plane work item, `states/` and `PATCH`. Unknown
 * issues answer as each API does (404, Jira's `errorMessages`, Linear's `Entity not found`).
 * Every change is recorded in `moves`.
 */

/** A workflow state of the stand-in (Jira category, Linear type, Plane group). */
export interface FakeState {
  id: string;
  name: string;
  /** Jira `statusCategory.key`: new, indeterminate, done. */
  category: "new" | "indeterminate" | "done";
  /** Linear `type` and Plane `group`. */
  type: string;
}

/** The default workflow of Jira, Linear and Plane in the stand-in. */
export const FAKE_WORKFLOW: FakeState[] = [
  { id: "st-todo", name: "To Do", category: "new", type: "unstarted" },
  { id: "st-progress", name: "In Progress", category: "indeterminate", type: "started" },
  { id: "st-review", name: "In Review", category: "indeterminate", type: "started" },
  { id: "st-done", name: "Done", category: "done", type: "completed" },
  { id: "st-cancel", name: "Canceled", category: "done", type: "canceled" },
];

/** A state change the stand-in made. */
export interface FakeMove {
  tracker: "github" | "gitlab" | "jira" | "linear" | "plane";
  number: number;
  /** What changed: `state closed (completed)`, `+label in progress`, `-label …`, `status Done`. */
  change: string;
}

/** What the workflow routes read and change. */
export interface WorkflowIssue {
  number: number;
  labels: string[];
  state: "open" | "closed";
  /** The workflow state's name (Jira, Linear, Plane); default by `state`. */
  status?: string;
  state_reason?: string;
}

/** The part of the stand-in the workflow routes use. */
export interface WorkflowFake {
  issues: WorkflowIssue[];
  /** Labels of the GitHub repository and the GitLab project. */
  repoLabels: string[];
  workflow: FakeState[];
  moves: FakeMove[];
}

/** The state `issue` is in (its `status`, else To Do / Done by its open or closed state). */
export function statusOf(fake: WorkflowFake, issue: WorkflowIssue): FakeState {
  const name = issue.status ?? (issue.state === "open" ? "To Do" : "Done");
  return fake.workflow.find((s) => s.name === name) ?? fake.workflow[0];
}

function setStatus(issue: WorkflowIssue, state: FakeState) {
  issue.status = state.name;
  issue.state = state.category === "done" ? "closed" : "open";
}

const notFound = (body: unknown) => Response.json(body, { status: 404 });

function find(fake: WorkflowFake, n: number) {
  return fake.issues.find((i) => i.number === n);
}

function github(fake: WorkflowFake, req: Request, path: string, body: string) {
  let m: RegExpExecArray | null;
  const gone = { message: "Not Found", documentation_url: "https://docs.github.com/rest" };
  if (/^\/repos\/[^/]+\/[^/]+\/labels$/.test(path)) {
    return Response.json(fake.repoLabels.map((name, i) => ({ id: i + 1, name, color: "ededed" })));
  }
  if ((m = /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/labels(?:\/(.+))?$/.exec(path))) {
    const issue = find(fake, Number(m[1]));
    if (!issue) return notFound(gone);
    if (req.method === "POST") {
      for (const name of JSON.parse(body).labels as string[]) {
        if (!issue.labels.includes(name)) issue.labels.push(name);
        fake.moves.push({ tracker: "github", number: issue.number, change: `+label ${name}` });
      }
      return Response.json(issue.labels.map((name) => ({ name })));
    }
    if (req.method === "DELETE" && m[2]) {
      const name = decodeURIComponent(m[2]);
      if (!issue.labels.includes(name)) return notFound({ message: "Label does not exist" });
      issue.labels = issue.labels.filter((l) => l !== name);
      fake.moves.push({ tracker: "github", number: issue.number, change: `-label ${name}` });
      return Response.json(issue.labels.map((l) => ({ name: l })));
    }
  }
  if ((m = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)$/.exec(path))) {
    const issue = find(fake, Number(m[2]));
    if (!issue) return notFound(gone);
    if (req.method === "PATCH") {
      const patch = JSON.parse(body);
      if (patch.state === "closed" || patch.state === "open") {
        issue.state = patch.state;
        issue.state_reason = patch.state_reason;
        fake.moves.push({
          tracker: "github",
          number: issue.number,
          change: `state ${patch.state} (${patch.state_reason})`,
        });
      }
    }
    return Response.json({
      number: issue.number,
      state: issue.state,
      state_reason: issue.state_reason ?? null,
      labels: issue.labels.map((name) => ({ name })),
    });
  }
  return undefined;
}

function gitlab(fake: WorkflowFake, req: Request, path: string, body: string) {
  let m: RegExpExecArray | null;
  if (/^\/api\/v4\/projects\/[^/]+\/labels$/.test(path)) {
    return Response.json(fake.repoLabels.map((name, i) => ({ id: i + 1, name })), {
      headers: { "x-next-page": "" },
    });
  }
  if ((m = /^\/api\/v4\/projects\/[^/]+\/issues\/(\d+)$/.exec(path))) {
    const issue = find(fake, Number(m[1]));
    if (!issue) return notFound({ message: "404 Not found" });
    if (req.method === "PUT") {
      const put = JSON.parse(body);
      for (const name of String(put.add_labels ?? "").split(",").filter(Boolean)) {
        if (!issue.labels.includes(name)) issue.labels.push(name);
        fake.moves.push({ tracker: "gitlab", number: issue.number, change: `+label ${name}` });
      }
      for (const name of String(put.remove_labels ?? "").split(",").filter(Boolean)) {
        issue.labels = issue.labels.filter((l) => l !== name);
        fake.moves.push({ tracker: "gitlab", number: issue.number, change: `-label ${name}` });
      }
      if (put.state_event === "close") {
        issue.state = "closed";
        fake.moves.push({ tracker: "gitlab", number: issue.number, change: "state closed" });
      }
    }
    return Response.json({
      iid: issue.number,
      state: issue.state === "open" ? "opened" : "closed",
      labels: issue.labels,
    });
  }
  return undefined;
}

function jira(fake: WorkflowFake, req: Request, path: string, body: string) {
  const m = /^\/rest\/api\/3\/issue\/PROJ-(\d+)(\/transitions)?$/.exec(path);
  if (!m) return undefined;
  const issue = find(fake, Number(m[1]));
  if (!issue) {
    return notFound({
      errorMessages: ["Issue does not exist or you do not have permission to see it."],
      errors: {},
    });
  }
  const current = statusOf(fake, issue);
  const reachable = fake.workflow.filter((s) => s.name !== current.name);
  if (!m[2]) {
    return Response.json({
      key: `PROJ-${issue.number}`,
      fields: {
        status: { name: current.name, id: current.id, statusCategory: { key: current.category } },
      },
    });
  }
  if (req.method === "GET") {
    return Response.json({
      expand: "transitions",
      transitions: reachable.map((s) => ({
        id: `t-${s.id}`,
        name: `Move to ${s.name}`,
        to: { id: s.id, name: s.name, statusCategory: { key: s.category } },
        hasScreen: false,
      })),
    });
  }
  const id = JSON.parse(body).transition?.id;
  const to = reachable.find((s) => `t-${s.id}` === id);
  if (!to) {
    return Response.json({
      errorMessages: [`Transition id '${id}' is not valid for this issue.`],
      errors: {},
    }, { status: 400 });
  }
  setStatus(issue, to);
  fake.moves.push({ tracker: "jira", number: issue.number, change: `status ${to.name}` });
  return new Response(null, { status: 204 });
}

function linear(fake: WorkflowFake, body: string) {
  const { query, variables } = JSON.parse(body);
  if (!/IssueStates|issueUpdate/.test(query)) return undefined;
  const issue = find(fake, Number(/^lin-(\d+)$/.exec(variables.id)?.[1]));
  if (!issue) {
    return Response.json({
      data: null,
      errors: [{
        message: "Entity not found: Issue",
        extensions: { code: "INVALID_INPUT", userPresentableMessage: "Could not find Issue." },
      }],
    });
  }
  if (/IssueStates/.test(query)) {
    const s = statusOf(fake, issue);
    return Response.json({
      data: {
        issue: {
          identifier: `ENG-${issue.number}`,
          state: { id: s.id, name: s.name, type: s.type },
        },
        workflowStates: {
          nodes: fake.workflow.map((w) => ({ id: w.id, name: w.name, type: w.type })),
        },
      },
    });
  }
  const to = fake.workflow.find((w) => w.id === variables.stateId);
  if (!to) {
    return Response.json({
      data: null,
      errors: [{ message: "Argument Validation Error", extensions: { code: "INVALID_INPUT" } }],
    });
  }
  setStatus(issue, to);
  fake.moves.push({ tracker: "linear", number: issue.number, change: `status ${to.name}` });
  return Response.json({
    data: { issueUpdate: { success: true, issue: { state: { name: to.name } } } },
  });
}

function plane(fake: WorkflowFake, req: Request, path: string, body: string) {
  const base = /^\/api\/v1\/workspaces\/[^/]+\/projects\/[^/]+/.exec(path)?.[0];
  if (!base) return undefined;
  const rest = path.slice(base.length);
  if (rest === "/states/") {
    return Response.json({
      results: fake.workflow.map((s) => ({ id: s.id, name: s.name, group: s.type })),
      next_page_results: false,
    });
  }
  const m = /^\/issues\/pl-(\d+)\/$/.exec(rest);
  if (!m) return undefined;
  const issue = find(fake, Number(m[1]));
  if (!issue) return notFound({ error: "Issue not found" });
  if (req.method === "PATCH") {
    const to = fake.workflow.find((s) => s.id === JSON.parse(body).state);
    if (!to) {
      return Response.json({ state: ["Invalid pk - object does not exist."] }, { status: 400 });
    }
    setStatus(issue, to);
    fake.moves.push({ tracker: "plane", number: issue.number, change: `status ${to.name}` });
  }
  return Response.json({
    id: `pl-${issue.number}`,
    sequence_id: issue.number,
    state: statusOf(fake, issue).id,
  });
}

/** The stand-in's answer to a workflow request, or undefined when `req` is not one. */
export function workflowRoute(
  fake: WorkflowFake,
  req: Request,
  body: string,
): Response | undefined {
  const path = new URL(req.url).pathname;
  if (path === "/graphql") return linear(fake, body);
  return github(fake, req, path, body) ?? gitlab(fake, req, path, body) ??
    jira(fake, req, path, body) ?? plane(fake, req, path, body);
}
