/**
 * Polling through each tracker's real API shape (against the local stand-in in
 * _tracker_apis.ts): open tickets on the first poll, `since`-style cursors after, pagination,
 * rate limits and back-off, and the boot replay feeding the same sink as the webhook route.
 */
import assert from "node:assert/strict";
import type { ApiAccess } from "../lib/trackers/adapter.ts";
import { BUILTIN_TRACKERS } from "../lib/trackers/builtin.ts";
import { HttpApiError } from "../lib/http/api_error.ts";
import { nextPollDelay } from "../lib/http/backoff.ts";
import { replayFilter, TrackerPoller } from "../lib/trackers/poller.ts";
import { closeTrackerService, trackerServiceFor } from "../lib/trackers/service.ts";
import { trackerSettings } from "../lib/trackers/settings.ts";
import { integrationRows } from "../lib/trackers/integrations.ts";
import { TrackerRuntimeStore } from "../lib/trackers/state.ts";
import { parseConfig } from "../lib/config/load.ts";
import type { Ticket } from "../lib/trackers/ticket.ts";
import { type FakeIssue, PLANE_PROJECT, startFakeTrackerApis } from "./_tracker_apis.ts";
import { testWorkspace } from "./_workspace.ts";

const ago = (min: number) =>
  new Date(Date.now() - min * 60_000).toISOString().replace(/\.\d+Z$/, "Z");

function sampleIssues(): FakeIssue[] {
  return [
    { number: 1, title: "One", body: "b1", labels: ["agent"], state: "open", updated_at: ago(180) },
    { number: 2, title: "Two", body: "b2", labels: [], state: "open", updated_at: ago(120) },
    { number: 3, title: "Three", body: "b3", labels: [], state: "closed", updated_at: ago(60) },
    { number: 4, title: "Four", body: "b4", labels: [], state: "open", updated_at: ago(30) },
    { number: 5, title: "Five", body: "b5", labels: [], state: "open", updated_at: ago(10) },
  ];
}

function access(tracker: string, url: string): ApiAccess {
  const shape: Record<string, [string, string]> = {
    tracker_a: [url, "PROJ"],
    tracker_b: [url, "octo/app"],
    tracker_c: [url, "group/app"],
    tracker_d: [`${url}/graphql`, "ENG"],
    tracker_e: [url, `acme/${PLANE_PROJECT}`],
  };
  const [apiUrl, project] = shape[tracker];
  return { fetch, now: Date.now, apiUrl, project, token: "tok" };
}

const titles = (tickets: Ticket[]) => tickets.map((t) => t.title);

for (const tracker of ["tracker_a", "tracker_b", "tracker_c", "tracker_d", "tracker_e"]) {
  Deno.test(`poll ${tracker}: open tickets first, then what changed since the cursor, across pages`, async () => {
    await using fake = startFakeTrackerApis(sampleIssues());
    const adapter = BUILTIN_TRACKERS.get(tracker)!;
    const first = await adapter.poll(access(tracker, fake.url), undefined);
    assert.deepEqual(titles(first.tickets), ["One", "Two", "Four", "Five"]);
    assert.ok(first.tickets.every((t) => t.state === "open" && t.tracker === tracker && t.url));
    assert.ok(fake.requests.length >= 2, "pagination was followed");
    const since = ago(90);
    const later = await adapter.poll(access(tracker, fake.url), since);
    assert.deepEqual(titles(later.tickets), ["Three", "Four", "Five"]);
    assert.equal(later.tickets[0].state, "closed");
  });
}

/** A poller of GitHub's `octo/app` (tracker_b) with `keys` in its block; what it feeds is in `fed`. */
function githubPoller(o: {
  keys: string;
  runtime: TrackerRuntimeStore;
  env?: (name: string) => string | undefined;
  warn?: (line: string) => void;
}) {
  const config = parseConfig(
    "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n    project: octo/app\n" + o.keys,
  );
  const [settings] = trackerSettings(config, BUILTIN_TRACKERS);
  const fed: Ticket[] = [];
  const poller = new TrackerPoller(settings, settings.adapter!, {
    fetch,
    now: Date.now,
    env: o.env ?? (() => undefined),
    sink: (t) => {
      fed.push(...t);
      return Promise.resolve(t.map((x) => ({ ref: x.ref, action: "created" as const })));
    },
    runtime: o.runtime,
    warn: o.warn ?? (() => {}),
  });
  return { poller, fed };
}

Deno.test("poll: each tracker's request carries its real cursor and auth shape", async () => {
  await using fake = startFakeTrackerApis(sampleIssues());
  const since = ago(90);
  for (const tracker of BUILTIN_TRACKERS.keys()) {
    await BUILTIN_TRACKERS.get(tracker)!.poll(access(tracker, fake.url), since);
  }
  const gh = fake.requests.find((r) => r.path === "/repos/octo/app/issues")!;
  assert.equal(gh.query.get("since"), since);
  assert.equal(gh.query.get("state"), "all");
  assert.equal(gh.headers.get("authorization"), "Bearer tok");
  assert.equal(gh.headers.get("x-github-api-version"), "2022-11-28");
  const gl = fake.requests.find((r) => r.path.startsWith("/api/v4/projects/"))!;
  assert.equal(gl.path, "/api/v4/projects/group%2Fapp/issues");
  assert.equal(gl.query.get("updated_after"), since);
  assert.equal(gl.headers.get("private-token"), "tok");
  const jira = fake.requests.find((r) => r.path === "/rest/api/3/search/jql")!;
  assert.match(
    jira.query.get("jql")!,
    /^project = "PROJ" AND updated >= -\d+m ORDER BY updated ASC$/,
  );
  const lin = fake.requests.find((r) => r.path === "/graphql")!;
  assert.deepEqual(JSON.parse(lin.body).variables.filter, {
    team: { key: { eq: "ENG" } },
    updatedAt: { gt: since },
  });
  assert.equal(lin.headers.get("authorization"), "tok");
  const pl = fake.requests.find((r) => r.path.startsWith("/api/v1/workspaces/"))!;
  assert.equal(pl.path, `/api/v1/workspaces/acme/projects/${PLANE_PROJECT}/issues/`);
  assert.equal(pl.query.get("order_by"), "-updated_at");
  assert.equal(pl.headers.get("x-api-key"), "tok");
});

Deno.test("poll: 429 with Retry-After and 5xx back off; 401 is not retried fast", async () => {
  await using fake = startFakeTrackerApis(sampleIssues());
  const dir = await Deno.makeTempDir();
  const runtime = await TrackerRuntimeStore.open(`${dir}/trackers.json`, 10);
  const { poller, fed } = githubPoller({
    keys: `    poll_interval_s: 60\n    api_url: ${fake.url}\n`,
    runtime,
  });
  fake.failNext.push({ status: 429, headers: { "retry-after": "600" } });
  assert.ok(await poller.pollOnce() >= 600_000);
  assert.equal(runtime.get("tracker_b").last_poll?.outcome, "failed");
  fake.failNext.push({ status: 502 }, { status: 503 });
  const d1 = await poller.pollOnce();
  const d2 = await poller.pollOnce();
  assert.ok(d2 > d1 && d1 > 60_000, `${d1} then ${d2}`);
  assert.equal(await poller.pollOnce(), 60_000);
  assert.equal(fed.length, 4);
  assert.equal(runtime.get("tracker_b").last_poll?.outcome, "ok");
  // An exhausted window waits for its reset.
  const reset = Date.now() + 900_000;
  assert.ok(
    nextPollDelay({
      intervalMs: 60_000,
      nowMs: Date.now(),
      failures: 0,
      rate: { remaining: 0, resetAtMs: reset },
    }) > 890_000,
  );
  assert.equal(new HttpApiError("x", { status: 401 }).retryable, false);
  await runtime.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("poll: a webhook that moved the cursor past a change whose delivery was lost does not hide that change from the next poll", async () => {
  await using fake = startFakeTrackerApis(sampleIssues());
  const dir = await Deno.makeTempDir();
  const runtime = await TrackerRuntimeStore.open(`${dir}/trackers.json`, 10);
  const { poller, fed } = githubPoller({
    keys: `    poll_interval_s: 60\n    api_url: ${fake.url}\n` +
      "    webhook: { enabled: true, secret_env: WH_LOST }\n",
    runtime,
  });
  try {
    await poller.pollOnce();
    assert.deepEqual(titles(fed), ["One", "Two", "Four", "Five"]);
    fed.length = 0;
    // Six changes and its delivery is lost; Seven changes later and its delivery comes: the
    // webhook route's sink moves last_processed_ts to Seven's time.
    const at = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
    fake.issues.push(
      { number: 6, title: "Six", body: "", labels: [], state: "open", updated_at: at(2) },
      { number: 7, title: "Seven", body: "", labels: [], state: "open", updated_at: at(1) },
    );
    runtime.update("tracker_b", { last_processed_ts: fake.issues[6].updated_at });
    await poller.pollOnce();
    assert.deepEqual(titles(fed), ["Six", "Seven"], "the poll, the safety net, sees Six");
    fed.length = 0;
    await poller.pollOnce();
    assert.deepEqual(titles(fed), [], "and then only what changed since");
  } finally {
    await runtime.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("webhook only: a startup replay longer than one poll's page cap goes on until it has caught up", async () => {
  const issues: FakeIssue[] = Array.from({ length: 25 }, (_, i) => ({
    number: i + 1,
    title: `T${i + 1}`,
    body: "",
    labels: [],
    state: "open",
    updated_at: ago(60 - i),
  }));
  await using fake = startFakeTrackerApis(issues);
  const dir = await Deno.makeTempDir();
  const runtime = await TrackerRuntimeStore.open(`${dir}/trackers.json`, 10);
  runtime.update("tracker_b", {
    last_processed_ts: new Date(Date.now() - 120 * 60_000).toISOString(),
  });
  const { poller, fed } = githubPoller({
    keys:
      `    polling: false\n    poll_interval_s: 0.05\n    api_url: ${fake.url}\n    token_env: TOK\n` +
      "    webhook: { enabled: true, secret_env: WH_CAP }\n",
    runtime,
    env: (n) => n === "TOK" ? "tok" : undefined,
  });
  try {
    poller.startBootReplay();
    const deadline = Date.now() + 10_000;
    while (fed.length < 25) {
      assert.ok(Date.now() < deadline, `the replay stopped after ${fed.length} of 25 tickets`);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(new Set(titles(fed)).size, 25);
  } finally {
    await poller.stop();
    await runtime.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("poll: a 403 that says no requests remain waits for the reset and will retry; an echoed token is never shown", async () => {
  await using fake = startFakeTrackerApis(sampleIssues());
  const dir = await Deno.makeTempDir();
  const runtime = await TrackerRuntimeStore.open(`${dir}/trackers.json`, 10);
  const token = "ghp_echoedTokenValue0123456789";
  const warnings: string[] = [];
  const { poller } = githubPoller({
    keys: `    poll_interval_s: 60\n    token_env: GH_TOKEN\n    api_url: ${fake.url}\n`,
    runtime,
    env: (n) => n === "GH_TOKEN" ? token : undefined,
    warn: (l) => warnings.push(l),
  });
  const reset = Math.floor(Date.now() / 1000) + 1200;
  fake.failNext.push({
    status: 403,
    headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) },
    body: JSON.stringify({ message: `API rate limit exceeded for token ${token}\x1b[2K` }),
  });
  assert.ok(await poller.pollOnce() > 1_150_000, "waits for the window's reset");
  const detail = runtime.get("tracker_b").last_poll?.detail ?? "";
  assert.match(detail, /will retry with back-off/);
  assert.match(
    detail,
    /GitHub answered GET http:\/\/127\.0\.0\.1:\d+\/repos\/octo\/app\/issues with HTTP 403/,
  );
  for (const shown of [detail, ...warnings]) {
    // deno-lint-ignore no-control-regex -- the raw escape must not be there
    assert.doesNotMatch(shown, /echoedToken|\x1b|state=open/, shown);
    assert.match(shown, /for token \[redacted\]\\x1b\[2K/);
  }
  await runtime.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("replayFilter drops tickets not newer than last_processed_ts; keeps open ones without updated_at", () => {
  const t = (title: string, updated_at?: string, state: "open" | "closed" = "open"): Ticket => ({
    tracker: "x",
    key: title,
    ref: title,
    title,
    body: "",
    labels: [],
    state,
    url: "",
    raw: { updated_at },
  });
  const tickets = [
    t("old", "2026-01-01T00:00:00Z"),
    t("same", "2026-01-02T00:00:00.000Z"),
    t("new", "2026-01-03T00:00:00Z"),
    t("unknown"),
    t("unknown-closed", undefined, "closed"),
  ];
  assert.deepEqual(titles(replayFilter(tickets, "2026-01-02T00:00:00Z")), ["new", "unknown"]);
  assert.equal(replayFilter(tickets, undefined).length, 5);
});

Deno.test("polling end to end: tasks appear, last_processed_ts is kept, a restart replays only what is newer", async () => {
  await using fake = startFakeTrackerApis(sampleIssues());
  await using ws = await testWorkspace({
    config: "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n    project: octo/app\n" +
      `    poll_interval_s: 0.05\n    api_url: ${fake.url}\n`,
  });
  await trackerServiceFor(ws.ctx);
  const waitFor = async (what: string, ok: () => Promise<boolean>) => {
    const deadline = Date.now() + 10_000;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const count = async () => (await ws.call("GET", "/tasks")).body.tasks.length;
  await waitFor("4 tasks", async () => await count() === 4);
  await closeTrackerService(ws.ctx);
  const state = JSON.parse(await Deno.readTextFile(`${ws.root}/.sdd/runtime/trackers.json`));
  assert.equal(
    state.tracker_b.last_processed_ts,
    new Date(fake.issues[4].updated_at).toISOString(),
  );
  assert.equal(state.tracker_b.last_poll.outcome, "ok");
  fake.issues.push({
    number: 6,
    title: "Six",
    body: "",
    labels: [],
    state: "open",
    updated_at: ago(0),
  });
  fake.issues[0].state = "closed";
  fake.issues[0].updated_at = ago(0);
  fake.requests.length = 0;
  await trackerServiceFor(ws.ctx);
  await waitFor("task six", async () => await count() === 5);
  await waitFor(
    "task one cancelled",
    async () => (await ws.call("GET", "/tasks/tracker_b-octo-app-1")).body.status === "CANCELLED",
  );
  assert.equal(fake.requests[0].query.get("since"), state.tracker_b.last_processed_ts);
});

Deno.test("webhook only (polling: false) with a token: each start replays what changed while the service was down, and polls no more", async () => {
  await using fake = startFakeTrackerApis(sampleIssues());
  const tokenVar = `TRK_REPLAY_TOKEN_${Deno.pid}`;
  Deno.env.set(tokenVar, "tok");
  await using ws = await testWorkspace({
    config: "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n    project: octo/app\n" +
      `    polling: false\n    poll_interval_s: 0.05\n    api_url: ${fake.url}\n` +
      `    token_env: ${tokenVar}\n    webhook: { enabled: true, secret_env: WH_REPLAY_${Deno.pid} }\n`,
  });
  try {
    const state = async () =>
      JSON.parse(await Deno.readTextFile(`${ws.root}/.sdd/runtime/trackers.json`)).tracker_b;
    const count = async () => (await ws.call("GET", "/tasks")).body.tasks.length;
    // First start: nothing was missed yet; the cursor starts now and the open tickets stay out.
    await trackerServiceFor(ws.ctx);
    await closeTrackerService(ws.ctx);
    const first = await state();
    assert.ok(first.last_processed_ts, "the replay cursor is set on the first start");
    assert.match(first.last_poll.detail, /webhook only: the replay cursor starts now/);
    assert.equal(fake.requests.length, 0);
    assert.equal(await count(), 0);
    // While the service is down, a ticket is opened and another closed.
    fake.issues.push({
      number: 6,
      title: "Opened while down",
      body: "",
      labels: [],
      state: "open",
      updated_at: new Date(Date.parse(first.last_processed_ts) + 1000).toISOString(),
    });
    await trackerServiceFor(ws.ctx);
    const deadline = Date.now() + 10_000;
    while (await count() === 0) {
      assert.ok(
        Date.now() < deadline,
        "the startup replay did not create the missed ticket's task",
      );
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(
      (await ws.call("GET", "/tasks/tracker_b-octo-app-6")).body.title,
      "Opened while down",
    );
    const requests = fake.requests.length;
    assert.equal(fake.requests[0].query.get("since"), first.last_processed_ts);
    // No interval polling after the replay (the interval is 50 ms: several would have run).
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fake.requests.length, requests);
    await closeTrackerService(ws.ctx);
    assert.match(
      (await state()).last_poll.detail,
      /^startup replay \(webhook only\): 1 ticket\(s\), 1 new task/,
    );
  } finally {
    Deno.env.delete(tokenVar);
  }
});

Deno.test("webhook only without API access: no startup replay, and integrations say missed deliveries are lost", () => {
  const config = parseConfig(
    "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n    project: octo/app\n    polling: false\n" +
      "    webhook: { enabled: true, secret_env: S }\n  tracker_d:\n    webhook: { enabled: true, secret_env: S }\n" +
      "  tracker_c:\n    project: g/a\n    webhook: { enabled: true, secret_env: S }\n",
  );
  const rows = Object.fromEntries(
    integrationRows(config, { builtins: BUILTIN_TRACKERS, env: () => undefined, runtime: {} }).map((
      r,
    ) => [r.adapter, r]),
  );
  assert.equal(rows.tracker_b.missed_deliveries, "lost: TRACKER_B_TOKEN is empty");
  assert.match(rows.tracker_d.missed_deliveries!, /^lost: trackers\.tracker_d\.project is not set/);
  assert.equal(rows.tracker_c.missed_deliveries, "caught up by polling");
  const withToken = integrationRows(config, {
    builtins: BUILTIN_TRACKERS,
    env: (n) => n === "TRACKER_B_TOKEN" ? "t" : undefined,
    runtime: {},
  });
  assert.equal(
    withToken.find((r) => r.adapter === "tracker_b")!.missed_deliveries,
    "replayed at start",
  );
});

Deno.test("poll GitHub: a poll that finds nothing changed is a conditional request GitHub answers 304 (free of rate limit), and a change is still seen", async () => {
  await using fake = startFakeTrackerApis(sampleIssues().slice(0, 1));
  const dir = await Deno.makeTempDir();
  const runtime = await TrackerRuntimeStore.open(`${dir}/trackers.json`, 10);
  const { poller, fed } = githubPoller({
    keys: `    poll_interval_s: 60\n    api_url: ${fake.url}\n`,
    runtime,
  });
  try {
    await poller.pollOnce();
    assert.deepEqual(titles(fed), ["One"]);
    await poller.pollOnce(); // nothing changed since: the same list, the same URL
    await poller.pollOnce();
    const lists = fake.requests.filter((r) => r.path === "/repos/octo/app/issues");
    assert.equal(lists.length, 3);
    assert.equal(lists[0].headers.get("if-none-match"), null);
    assert.match(lists[2].headers.get("if-none-match") ?? "", /^W\/"[0-9a-f]{64}"$/);
    assert.equal(fake.notModified, 1, "the third poll asked for the second's list by its ETag");
    assert.deepEqual(titles(fed), ["One"], "an unchanged list feeds nothing again");
    assert.equal(runtime.get("tracker_b").last_poll?.outcome, "ok");
    fake.issues.push({
      number: 8,
      title: "Eight",
      body: "",
      labels: [],
      state: "open",
      updated_at: new Date().toISOString(),
    });
    await poller.pollOnce();
    assert.deepEqual(titles(fed), ["One", "Eight"], "a changed list is read in full");
  } finally {
    await runtime.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("poll GitLab: an api_url written with /api/v4 (as landing.api_url is for the same GitLab) is the REST base, not doubled", async () => {
  await using fake = startFakeTrackerApis(sampleIssues());
  const adapter = BUILTIN_TRACKERS.get("tracker_c")!;
  for (const apiUrl of [fake.url, `${fake.url}/api/v4`, `${fake.url}/api/v4/`]) {
    const first = await adapter.poll({ ...access("tracker_c", fake.url), apiUrl }, undefined);
    assert.deepEqual(titles(first.tickets), ["One", "Two", "Four", "Five"], apiUrl);
  }
  assert.ok(fake.requests.every((r) => r.path === "/api/v4/projects/group%2Fapp/issues"));
});
