/**
 * A local stand-in for the five trackers' APIs, speaking their real wire formats: GitHub REST
 * issues (`since`, `Link` pages, `X-RateLimit-*`, an `ETag` and 304), GitLab v4 issues (`updated_after`,
 * `X-Next-Page`, `RateLimit-*`), Jira Cloud enhanced JQL search (`nextPageToken`, `isLast`),
 * Linear GraphQL `issues` (filter, `pageInfo`) and Plane's project issues (`next_cursor`).
 * Reading and moving one issue through its workflow is served by _tracker_workflows.ts.
 * It serves on 127.0.0.1:0, logs every request and can be told to fail the next ones.
 */

import {
  FAKE_WORKFLOW,
  type FakeMove,
  type FakeState,
  workflowRoute,
} from "./_tracker_workflows.ts";

/** One issue as the fake stores it; rendered per tracker on the way out. */
export interface FakeIssue {
  number: number;
  title: string;
  body: string;
  labels: string[];
  state: "open" | "closed";
  updated_at: string;
  /** The workflow state's name on Jira, Linear and Plane (default: To Do / Done by `state`). */
  status?: string;
  /** GitHub's `state_reason` once closed. */
  state_reason?: string;
}

/** A request the fake saw. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: string;
}

/** The running fake. */
export interface FakeTrackerApis extends AsyncDisposable {
  url: string;
  issues: FakeIssue[];
  requests: SeenRequest[];
  /** Answer the next requests with these statuses/headers first. */
  /** The next answers: a status, its headers, and a body (default `{"message":"fake failure"}`). */
  failNext: { status: number; headers?: Record<string, string>; body?: string }[];
  comments: { path: string; body: string }[];
  /** Labels of the GitHub repository and the GitLab project. */
  repoLabels: string[];
  /** The workflow states of Jira, Linear and Plane. */
  workflow: FakeState[];
  /** Every state change made (tests/_tracker_workflows.ts). */
  moves: FakeMove[];
  /** While set, every request is held (a tracker that does not answer) until it resolves. */
  hold?: Promise<void>;
  /** GitHub issue lists answered 304 Not Modified (the `If-None-Match` named their ETag). */
  notModified: number;
}

const PAGE = 2; // small pages so pagination is exercised

const LINEAR_TEAM = "ENG";
const PLANE_PROJECT = "4af68566-94a4-4eb3-94aa-50dc9427067b";

function github(i: FakeIssue, repo: string) {
  return {
    url: `https://api.github.test/repos/${repo}/issues/${i.number}`,
    html_url: `https://github.test/${repo}/issues/${i.number}`,
    id: 1000 + i.number,
    number: i.number,
    title: i.title,
    body: i.body,
    labels: i.labels.map((name) => ({ name, color: "ededed" })),
    state: i.state,
    updated_at: i.updated_at,
    created_at: "2026-01-01T00:00:00Z",
  };
}

function gitlab(i: FakeIssue, project: string) {
  return {
    id: 5000 + i.number,
    iid: i.number,
    project_id: 15,
    title: i.title,
    description: i.body,
    state: i.state === "open" ? "opened" : "closed",
    labels: i.labels,
    updated_at: i.updated_at,
    web_url: `https://gitlab.test/${project}/-/issues/${i.number}`,
    references: { full: `${project}#${i.number}` },
  };
}

function jira(i: FakeIssue, base: string) {
  return {
    id: String(10000 + i.number),
    key: `PROJ-${i.number}`,
    self: `${base}/rest/api/3/issue/${10000 + i.number}`,
    fields: {
      summary: i.title,
      description: {
        type: "doc",
        version: 1,
        content: [{ type: "paragraph", content: [{ type: "text", text: i.body }] }],
      },
      labels: i.labels,
      status: { statusCategory: { key: i.state === "open" ? "new" : "done" } },
      updated: i.updated_at.replace("Z", "+0000"),
    },
  };
}

function linear(i: FakeIssue) {
  return {
    id: `lin-${i.number}`,
    identifier: `${LINEAR_TEAM}-${i.number}`,
    title: i.title,
    description: i.body,
    url: `https://linear.test/acme/issue/${LINEAR_TEAM}-${i.number}`,
    updatedAt: i.updated_at,
    state: { type: i.state === "open" ? "unstarted" : "completed" },
    labels: { nodes: i.labels.map((name) => ({ name })) },
  };
}

function plane(i: FakeIssue) {
  return {
    id: `pl-${i.number}`,
    name: i.title,
    description_html: `<p>${i.body}</p>`,
    sequence_id: i.number,
    project: PLANE_PROJECT,
    state: { group: i.state === "open" ? "unstarted" : "completed" },
    labels: i.labels.map((name) => ({ name })),
    updated_at: i.updated_at,
  };
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

const byUpdate = (a: FakeIssue, b: FakeIssue) => a.updated_at.localeCompare(b.updated_at);

/** Start the fake over `issues`. */
export function startFakeTrackerApis(issues: FakeIssue[] = []): FakeTrackerApis {
  const fake = {
    issues,
    requests: [] as SeenRequest[],
    failNext: [] as { status: number; headers?: Record<string, string>; body?: string }[],
    comments: [] as { path: string; body: string }[],
    repoLabels: ["agent", "bug", "in progress", "blocked"],
    workflow: FAKE_WORKFLOW.map((s) => ({ ...s })),
    moves: [] as FakeMove[],
    hold: undefined as Promise<void> | undefined,
    notModified: 0,
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const u = new URL(req.url);
    const body = req.method === "GET" ? "" : await req.text();
    fake.requests.push({
      method: req.method,
      path: u.pathname,
      query: u.searchParams,
      headers: req.headers,
      body,
    });
    if (fake.hold) await fake.hold;
    const failure = fake.failNext.shift();
    if (failure) {
      return new Response(failure.body ?? JSON.stringify({ message: "fake failure" }), {
        status: failure.status,
        headers: failure.headers,
      });
    }
    const moved = workflowRoute(fake, req, body);
    if (moved) return moved;
    const base = `${u.protocol}//${u.host}`;
    const q = u.searchParams;
    let m: RegExpExecArray | null;
    if ((m = /^\/repos\/([^/]+\/[^/]+)\/issues$/.exec(u.pathname))) {
      const repo = m[1];
      const state = q.get("state") ?? "open";
      const since = q.get("since");
      const list = fake.issues.filter((i) => state === "all" || i.state === state)
        .filter((i) => !since || i.updated_at >= since).sort(byUpdate);
      const page = Number(q.get("page") ?? "1");
      const slice = list.slice((page - 1) * PAGE, page * PAGE);
      const headers: Record<string, string> = {
        "content-type": "application/json",
        "x-ratelimit-remaining": "4999",
        "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
      };
      if (page * PAGE < list.length) {
        const next = new URL(u);
        next.searchParams.set("page", String(page + 1));
        headers.link = `<${next}>; rel="next", <${next}>; rel="last"`;
      }
      // GitHub's ETag and conditional answer: a 304 with no body when nothing changed.
      const json = JSON.stringify(slice.map((i) => github(i, repo)));
      const etag = `W/"${await sha256Hex(json + (headers.link ?? ""))}"`;
      headers.etag = etag;
      if (req.headers.get("if-none-match") === etag) {
        fake.notModified++;
        return new Response(null, { status: 304, headers });
      }
      return new Response(json, { headers });
    }
    if ((m = /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/.exec(u.pathname))) {
      fake.comments.push({ path: u.pathname, body });
      return Response.json({ id: 1, body: JSON.parse(body).body }, { status: 201 });
    }
    if (/^\/api\/v4\/projects\/[^/]+\/issues\/\d+\/notes$/.test(u.pathname)) {
      fake.comments.push({ path: u.pathname, body });
      return Response.json({ id: 1, body: JSON.parse(body).body }, { status: 201 });
    }
    if ((m = /^\/api\/v4\/projects\/([^/]+)\/issues$/.exec(u.pathname))) {
      const project = decodeURIComponent(m[1]);
      const state = q.get("state") ?? "all";
      const after = q.get("updated_after");
      const list = fake.issues.filter((i) =>
        state === "all" || (state === "opened") === (i.state === "open")
      )
        .filter((i) => !after || i.updated_at >= after).sort(byUpdate);
      const page = Number(q.get("page") ?? "1");
      const headers: Record<string, string> = { "ratelimit-remaining": "1999" };
      if (page * PAGE < list.length) headers["x-next-page"] = String(page + 1);
      else headers["x-next-page"] = "";
      return Response.json(
        list.slice((page - 1) * PAGE, page * PAGE).map((i) => gitlab(i, project)),
        { headers },
      );
    }
    if (u.pathname === "/rest/api/3/search/jql") {
      const jql = q.get("jql") ?? "";
      const minutes = /updated >= -(\d+)m/.exec(jql);
      const from = minutes ? Date.now() - Number(minutes[1]) * 60_000 : undefined;
      const list = fake.issues
        .filter((i) => !/statusCategory != Done/.test(jql) || i.state === "open")
        .filter((i) => from === undefined || Date.parse(i.updated_at) >= from).sort(byUpdate);
      const start = Number(q.get("nextPageToken") ?? "0");
      const slice = list.slice(start, start + PAGE);
      const isLast = start + PAGE >= list.length;
      return Response.json({
        issues: slice.map((i) => jira(i, base)),
        isLast,
        ...(isLast ? {} : { nextPageToken: String(start + PAGE) }),
      });
    }
    if (u.pathname === "/graphql") {
      const { variables } = JSON.parse(body);
      const filter = variables.filter ?? {};
      const gt = filter.updatedAt?.gt;
      const list = fake.issues.filter((i) => !gt || i.updated_at > gt)
        .filter((i) => !filter.state || i.state === "open").sort(byUpdate);
      const start = Number(variables.after ?? "0");
      const slice = list.slice(start, start + PAGE);
      const more = start + PAGE < list.length;
      return Response.json({
        data: {
          issues: {
            nodes: slice.map(linear),
            pageInfo: { hasNextPage: more, endCursor: more ? String(start + PAGE) : null },
          },
        },
      });
    }
    if ((m = /^\/api\/v1\/workspaces\/([^/]+)\/projects\/([^/]+)\/issues\/$/.exec(u.pathname))) {
      const list = [...fake.issues].sort(byUpdate).reverse(); // -updated_at
      const start = Number(q.get("cursor") ?? "0");
      const more = start + PAGE < list.length;
      return Response.json({
        results: list.slice(start, start + PAGE).map(plane),
        next_cursor: more ? String(start + PAGE) : null,
        next_page_results: more,
      });
    }
    return Response.json({ message: `fake: no route ${req.method} ${u.pathname}` }, {
      status: 404,
    });
  });
  const addr = server.addr as Deno.NetAddr;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${addr.port}`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  });
}

export { LINEAR_TEAM, PLANE_PROJECT };
