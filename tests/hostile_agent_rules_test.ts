/**
 * A hostile agent cannot rewrite the rules the next run obeys (issue 31, DESIGN.md §18): real git
 * workspaces, the scripted agent as a real process, the real run loop and server. An agent that
 * edits `service.yaml`, a CI workflow or CODEOWNERS, writes into `.sdd/`, or renames a file into a
 * protected path never lands unattended: its task waits for review with the paths named in the
 * journal (`task_protected_paths`), in `service status`, on its card and — landing through
 * GitHub — in the pull request's body; nothing reaches the base until an operator's merge on the
 * board, which then lands it with a receipt. Each case runs in merge mode and in pull-request mode
 * (the GitHub stand-in), with host agents; one runs in a real container (podman), one on a remote
 * worker. A diff that leaves its task's owned_files is flagged (row and card), and refused under
 * `enforce_owned_files: true` with a reason the terminal, `status` and the board give.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { runPlan } from "../lib/runner/run.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { cardFace } from "../lib/dashboard/card_face.ts";
import type { OutlineTask } from "../lib/board/activity_types.ts";
import type { Card } from "../lib/board/types.ts";
import { CardView } from "../islands/parts/card_view.tsx";
import { tempDir } from "./helpers.ts";
import {
  browserPage,
  cli,
  cliAs,
  journalOf,
  openRunPage,
  planYaml,
  rowsOf,
  sh,
  type Step,
  until,
  watchedRun,
  withEnv,
  workspace,
} from "./_e2e.ts";
import { startFakeGithub } from "./fakes/github_api.ts";
import {
  sharedRemote,
  startWorker,
  WORKER_AUTH_YAML,
  WORKER_TOKENS,
  workerClone,
} from "./_workers.ts";
import { IMAGE_AGENT, skipping, testImage } from "./_container_image.ts";
import { screenshot } from "./browser/_harness.ts";

type Row = Awaited<ReturnType<typeof rowsOf>>[number];

/** One way an agent reaches a protected path. */
interface Case {
  /** The task's id (also its name in the test's title). */
  id: string;
  what: string;
  /** Files committed before the run. */
  files?: Record<string, string>;
  /** The agent's script (it reports at the end). */
  script: unknown[][];
  /** The protected paths the service must name. */
  paths: string[];
  /** What the base holds once the operator merged it (null: the file is gone). */
  landed: Record<string, string | null>;
}

const CASES: Case[] = [
  {
    id: "config",
    what: "service.yaml edited: isolation off and a worktree.setup command for the next run",
    script: [[
      "append",
      "service.yaml",
      'isolation: worktree\nworktree:\n  setup: ["touch PWNED_BY_AGENT"]\n',
    ]],
    paths: ["service.yaml"],
    landed: {},
  },
  {
    id: "workflow",
    what: "a CI workflow written",
    script: [["write", ".github/workflows/ci.yml", "on: push\njobs:\n  x: {runs-on: evil}\n"]],
    paths: [".github/workflows/ci.yml"],
    landed: { ".github/workflows/ci.yml": "on: push\njobs:\n  x: {runs-on: evil}\n" },
  },
  {
    id: "owners",
    what: "CODEOWNERS written",
    script: [["write", "CODEOWNERS", "* @attacker\n"]],
    paths: ["CODEOWNERS"],
    landed: { CODEOWNERS: "* @attacker\n" },
  },
  {
    id: "moved",
    what: "a harmless file renamed into .github/workflows/",
    files: { "ci-draft.yml": "on: push\n" },
    script: [["run", "mkdir -p .github/workflows && mv ci-draft.yml .github/workflows/ci.yml"]],
    paths: [".github/workflows/ci.yml"],
    landed: { ".github/workflows/ci.yml": "on: push\n", "ci-draft.yml": null },
  },
];

/**
 * Forced into the service's own state and committed: since ignored and copied files never enter
 * a commit (lib/worktrees/keep_out.ts), it is kept out of the branch before anything is judged.
 */
const STATE: Case = {
  id: "state",
  what: "a file forced into .sdd/ (the service's state) and committed by the agent",
  script: [[
    "run",
    "mkdir -p .sdd && printf 'planted\\n' > .sdd/planted.txt && git add -f .sdd/planted.txt " +
    "&& git commit -q -m 'plant state'",
  ]],
  paths: [".sdd/planted.txt"],
  landed: { ".sdd/planted.txt": "planted\n" },
};

const steps = (c: Case): Step[] => [{ id: c.id, script: [...c.script, ["report", "all done"]] }];

/** The rows of `type` for `task`. */
function rowsFor(rows: Row[], type: string, task: string): Row[] {
  return rows.filter((r) => r.type === type && r.data.task_id === task);
}

/** Rows of the run so far (none before it announced itself). */
async function rowsSoFar(root: string, runId: string): Promise<Row[]> {
  return runId ? await rowsOf(root, runId).catch(() => [] as Row[]) : [];
}

/**
 * Wait until the service judged `task`'s diff — or, on code that does not judge, until the task
 * merged — and assert it was held: `task_protected_paths` names `paths`, nothing merged.
 */
async function heldForReview(root: string, run: { runId: string }, task: string, paths: string[]) {
  await until(`${task}'s diff to be judged`, async () => {
    const rows = await rowsSoFar(root, run.runId);
    return rowsFor(rows, "task_protected_paths", task).length > 0 ||
      rowsFor(rows, "task_merged", task).length > 0 ||
      // A merge that waits for the checkout (not a wait for a worker to connect, before any diff).
      rowsFor(rows, "task_waiting", task).some((r) => !/worker/.test(String(r.data.reason)));
  });
  const rows = await rowsOf(root, run.runId);
  assert.deepEqual(rowsFor(rows, "task_merged", task), [], `${task} must not land unattended`);
  const [row] = rowsFor(rows, "task_protected_paths", task);
  assert.ok(row, `no task_protected_paths row names ${task}'s paths`);
  assert.deepEqual(row.data, { task_id: task, paths }, "the journal names the protected paths");
}

/** `service status` as a user runs it, once it names `task`'s protected paths. */
async function statusNames(root: string, task: string, paths: string[]): Promise<string> {
  let out = "";
  await until(`service status to say ${task} waits`, async () => {
    out = (await cliAs(AUTH.token, root, "status")).out;
    return out.includes(`${task} waits: it changes protected path`);
  });
  for (const p of paths) {
    assert.match(out, new RegExp(`${task} waits: it changes protected paths? .*${escape(p)}`));
    assert.match(
      out,
      new RegExp(
        `${task} PROTECTED: its diff changes .*${escape(p)}.*waits for an operator's merge`,
      ),
    );
  }
  return out;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * The operator's token of a run that takes remote workers (it configures tokens, so the board
 * and the review need one); none on a loopback run without tokens.
 */
const AUTH = { headers: {} as Record<string, string>, token: undefined as string | undefined };
const OPERATOR_TOKEN_ENV = "HOSTILE_RULES_OP_TOKEN";
const OPERATOR_TOKEN = "hostile-rules-operator";

/** The card of `task` as the board page draws it (the same component, from the same API). */
async function cardHtml(url: string, runId: string, task: string) {
  const board = await (await fetch(`${url}/review-board/runs/${runId}`, AUTH)).json();
  const column = Object.entries(board.board.columns as Record<string, Card[]>)
    .find(([, cards]) => cards.some((c) => c.task_id === task));
  assert.ok(column, `${task} has a card`);
  const card = column[1].find((c) => c.task_id === task)!;
  const outline = await (await fetch(`${url}/review-board/runs/${runId}/tasks`, AUTH)).json();
  const entry = (outline.tasks as OutlineTask[]).find((t) => t.task_id === task)!;
  return {
    column: column[0],
    entry,
    html: renderToString(h(CardView, { face: cardFace(card, entry) })),
  };
}

/** The card of `task` holds it in needs_review, naming each protected path. */
async function cardNames(url: string, runId: string, task: string, paths: string[]) {
  const { column, entry, html } = await cardHtml(url, runId, task);
  assert.equal(column, "needs_review");
  assert.deepEqual(entry.protected_paths, paths);
  assert.match(html, /PROTECTED/);
  for (const p of paths) assert.ok(html.includes(p), `the card names ${p}: ${html}`);
  // The diff under review shows those files.
  const diff = await (await fetch(`${url}/review-board/runs/${runId}/diff/${task}`, AUTH)).json();
  for (const p of paths) assert.ok(diff.files.includes(p), `the diff viewer lists ${p}`);
}

/** The operator's merge on the board; its receipt. */
async function merge(url: string, runId: string, task: string) {
  const res = await fetch(`${url}/dashboard/review-board/runs/${runId}/tasks/${task}/review`, {
    method: "POST",
    headers: { "content-type": "application/json", ...AUTH.headers },
    body: JSON.stringify({ decision: "merge", note: "I read the protected change" }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.receipt.decision, "merge");
  assert.match(body.receipt.audit_event_hash, /^[0-9a-f]{64}$/);
  return body.receipt;
}

/** What `git show <ref>:<path>` gives in `repo` (null when the path is not there). */
async function fileAt(repo: string, ref: string, path: string): Promise<string | null> {
  return await sh(repo, "show", `${ref}:${path}`).catch(() => null);
}

/** Every path of `c` is as it was before the run on `ref` of `repo`. */
async function untouched(repo: string, ref: string, c: Case, before: Record<string, string>) {
  for (const p of [...c.paths, ...Object.keys(c.landed)]) {
    assert.equal(await fileAt(repo, ref, p), before[p] ?? null, `${p} on ${ref} is untouched`);
  }
}

/** The base as it was (the paths of `c`), to compare with after. */
async function snapshot(repo: string, ref: string, c: Case): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const p of [...c.paths, ...Object.keys(c.landed)]) {
    const text = await fileAt(repo, ref, p);
    if (text !== null) out[p] = text;
  }
  return out;
}

/** After the merge: the agent's change is on `ref`, the merge came after the decision. */
async function landedAfterDecision(
  repo: string,
  ref: string,
  c: Case,
  rows: Row[],
  serviceYaml: string,
) {
  const decided = rows.findIndex((r) =>
    r.type === "task_review_decision" && r.data.task_id === c.id && r.data.decision === "merge"
  );
  const merged = rows.findIndex((r) => r.type === "task_merged" && r.data.task_id === c.id);
  assert.ok(decided > 0 && merged > decided, "it landed after the operator's merge decision");
  for (const [p, text] of Object.entries(c.landed)) {
    assert.equal(await fileAt(repo, ref, p), text, `${p} landed`);
  }
  if (c.id === "config") {
    assert.equal(await fileAt(repo, ref, "service.yaml"), serviceYaml + c.script[0][2]);
  }
}

for (const c of CASES) {
  Deno.test(`hostile agent, merge mode: ${c.what} waits for review naming ${c.paths.join(", ")}; an operator's merge lands it`, async () => {
    await using dir = await tempDir();
    // A second, harmless task lands unattended beside it, as it always did.
    await workspace(
      dir.path,
      [{
        name: "s",
        steps: [...steps(c), { id: "plain", script: [["write", "notes.txt", "x\n"], ["report"]] }],
      }],
      "",
      c.files,
    );
    const serviceYaml = await Deno.readTextFile(join(dir.path, "service.yaml"));
    const before = await snapshot(dir.path, "main", c);
    const stop = new AbortController();
    const run = stoppableRun(dir.path, stop);
    await heldForReview(dir.path, run, c.id, c.paths);
    await until(
      "the harmless task to land unattended",
      async () =>
        rowsFor(await rowsSoFar(dir.path, run.runId), "task_merged", "plain").length === 1,
    );
    await statusNames(dir.path, c.id, c.paths);
    await cardNames(run.url, run.runId, c.id, c.paths);
    assert.ok(
      run.lines.some((l) =>
        l.includes(`${c.id}: completed; it changes protected path`) && l.includes(c.paths[0])
      ),
      `the terminal says why it waits:\n${run.lines.join("\n")}`,
    );
    await untouched(dir.path, "main", c, before);

    await merge(run.url, run.runId, c.id);
    const result = await run.result;
    assert.equal(result.status, "completed", result.problems.join("; "));
    const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
    await landedAfterDecision(dir.path, "main", c, rows, serviceYaml);
  });
}

Deno.test("hostile agent: a file forced into .sdd/ (the service's state) and committed never enters a commit: kept out, nothing to review, nothing lands in the live state", async () => {
  await using dir = await tempDir();
  const c = STATE;
  await workspace(dir.path, [{ name: "s", steps: steps(c) }]);
  const before = await snapshot(dir.path, "main", c);
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  assert.deepEqual(rowsFor(rows, "task_files_kept_out", c.id)[0]?.data.paths, c.paths);
  assert.equal(rowsFor(rows, "task_unchanged", c.id).length, 1, "its work changes nothing");
  assert.equal(rowsFor(rows, "task_merged", c.id).length, 0);
  await untouched(dir.path, "main", c, before);
  assert.equal(await fileAt(dir.path, "main", ".sdd/planted.txt"), null);
  assert.equal(
    await Deno.readTextFile(join(dir.path, ".sdd/planted.txt")).catch(() => null),
    null,
    "nothing is written into the live state",
  );
});

/** `watchedRun` with a stop: aborting `stop` stops the run as `service stop` does. */
function stoppableRun(root: string, stop: AbortController) {
  const run = { url: "", runId: "", lines: [] as string[] };
  const result = runPlan({
    root,
    port: 0,
    app: SERVER_APP,
    signal: stop.signal,
    out: (line) => {
      run.lines.push(line);
      const m =
        /review board \(live while the run lasts\): (http:\/\/[^/]+)\/dashboard\/review-board\?run=(\S+)/
          .exec(line);
      if (m) [run.url, run.runId] = [m[1], m[2]];
    },
  });
  return Object.assign(run, { result });
}

/** A workspace landing through the GitHub stand-in (as tests/landing_github_e2e_test.ts). */
async function githubWorkspace(dir: string, c: Case) {
  await workspace(dir, [{ name: "s", steps: steps(c) }], "", c.files);
  const serviceYaml = await Deno.readTextFile(join(dir, "service.yaml"));
  const fake = await startFakeGithub(dir, { requiredChecks: ["ci/test"] });
  await sh(dir, "remote", "add", "origin", fake.bare);
  const tokenEnv = `FAKE_GH_TOKEN_${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
  // Not committed: main is protected on the host; the run reads service.yaml from the checkout.
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `landing:\n  mode: pull_request\n  provider: github\n  api_url: ${fake.url}\n` +
      `  repo: acme/widget\n  token_env: ${tokenEnv}\n  poll_interval_s: 1\n`,
    { append: true },
  );
  const env = withEnv({ [tokenEnv]: "gh-token" });
  return {
    fake,
    serviceYaml,
    async [Symbol.asyncDispose]() {
      env[Symbol.dispose]();
      await fake[Symbol.asyncDispose]();
    },
  };
}

for (const c of CASES) {
  Deno.test(`hostile agent, pull-request mode: ${c.what} — its pull request names ${c.paths.join(", ")} and merges only on the board's merge`, async () => {
    await using dir = await tempDir();
    await using gh = await githubWorkspace(dir.path, c);
    const before = await snapshot(gh.fake.bare, "main", c);
    const run = watchedRun(dir.path);
    await heldForReview(dir.path, run, c.id, c.paths);
    await until("its pull request to open", () => Promise.resolve(gh.fake.pulls().length === 1));
    await statusNames(dir.path, c.id, c.paths);
    await cardNames(run.url, run.runId, c.id, c.paths);
    const [pr] = gh.fake.pulls();
    assert.match(pr.body, /### Protected paths/);
    for (const p of c.paths) assert.ok(pr.body.includes(`- \`${p}\``), `the body names ${p}`);
    assert.match(pr.body, /merges only after an operator's merge decision on the review board/);
    // Its checks are green: only the board holds it.
    await until(
      "the host to say it is ready",
      async () =>
        rowsFor(await rowsSoFar(dir.path, run.runId), "task_pr_status", c.id).some((r) =>
          /waits for the merge decision on the board/.test(String(r.data.waits_for ?? ""))
        ),
    );
    assert.equal(gh.fake.pulls()[0].merged, false, "not merged before the operator decides");
    await untouched(gh.fake.bare, "main", c, before);

    await merge(run.url, run.runId, c.id);
    const result = await run.result;
    assert.equal(result.status, "completed", result.problems.join("; "));
    assert.equal(gh.fake.pulls()[0].merged, true);
    assert.deepEqual(await gh.fake.refusedPushes(), []);
    const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
    await landedAfterDecision(gh.fake.bare, "main", c, rows, gh.serviceYaml);
  });
}

Deno.test("hostile agent, merge mode: the board page shows the protected paths on the card and in the diff; the operator's Merge there lands it with a receipt", async () => {
  await using dir = await tempDir();
  const c = CASES[1];
  await workspace(dir.path, [{ name: "s", steps: steps(c) }]);
  const run = watchedRun(dir.path);
  await heldForReview(dir.path, run, c.id, c.paths);
  await using browser = await browserPage();
  const page = browser.page;
  await openRunPage(page, run.url, run.runId, c.id);
  const card = page.locator(`[data-column=needs_review] [data-task-id=${c.id}]`);
  await card.locator("[data-protected-paths]").waitFor();
  assert.match(await card.innerText(), /PROTECTED[\s\S]*\.github\/workflows\/ci\.yml/);
  await page.locator("[data-protected-notice]").waitFor();
  await page.locator('.file-toggle[data-path=".github/workflows/ci.yml"] [data-protected]')
    .waitFor();
  await page.locator("button[data-decision=merge]:not([disabled])").waitFor();
  await screenshot(page, "protected-paths-card.png");
  await page.click("button[data-decision=merge]");
  await page.locator("[data-review-receipt]").waitFor();
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(await fileAt(dir.path, "main", ".github/workflows/ci.yml"), c.landed[c.paths[0]]);
});

Deno.test("hostile agent on a remote worker: its CI workflow waits for review on the orchestrator; an operator's merge lands it", async () => {
  await using dir = await tempDir();
  const c = CASES[1];
  const { root, bare } = await sharedRemote(
    dir.path,
    [{ name: "s", steps: steps(c) }],
    "max_agents: 0\nheartbeat_timeout_s: 5\n" + WORKER_AUTH_YAML +
      `    - {principal: ops, scope: operator, token_env: ${OPERATOR_TOKEN_ENV}}\n`,
  );
  // A run takes remote workers only with a worker token (lib/workers/admission.ts); with
  // tokens configured, the operator's merge and the board reads carry the operator's.
  using _env = withEnv({ [OPERATOR_TOKEN_ENV]: OPERATOR_TOKEN });
  AUTH.headers = { authorization: `Bearer ${OPERATOR_TOKEN}` };
  AUTH.token = OPERATOR_TOKEN;
  const server = await startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: [
      ...WORKER_TOKENS,
      { principal: "ops", scope: "operator", token_env: OPERATOR_TOKEN_ENV },
    ],
    announce: false,
    app: SERVER_APP,
  });
  try {
    await using worker = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    // Connected before the run decides: a run with no worker yet journals that its tasks wait.
    await worker.saw(/registered with/);
    const run = { runId: "", lines: [] as string[] };
    const result = runPlan({
      root,
      server,
      app: SERVER_APP,
      out: (l) => {
        run.lines.push(l);
        run.runId ||= /^run (\S+):/.exec(l)?.[1] ?? "";
      },
    });
    await heldForReview(root, run, c.id, c.paths);
    const rows = await rowsOf(root, run.runId);
    assert.equal(rowsFor(rows, "task_claimed", c.id)[0].data.worker, "w1", "it ran on the worker");
    await statusNames(root, c.id, c.paths);
    await cardNames(server.url, run.runId, c.id, c.paths);
    assert.equal(await fileAt(root, "main", ".github/workflows/ci.yml"), null);
    await merge(server.url, run.runId, c.id);
    const outcome = await result;
    assert.equal(outcome.status, "completed", outcome.problems.join("; "));
    await landedAfterDecision(root, "main", c, await rowsOf(root, run.runId), "");
  } finally {
    await server.shutdown();
  }
});

const image = await testImage();

Deno.test({
  name: "hostile agent in a container: its service.yaml edit waits for review naming it; an " +
    "operator's merge lands it",
  ignore: skipping(image),
  async fn() {
    await using dir = await tempDir();
    const c = CASES[0];
    const root = dir.path;
    await sh(root, "init", "-q", "-b", "main");
    await sh(root, "config", "user.email", "e2e@localhost");
    await sh(root, "config", "user.name", "e2e");
    await Deno.writeTextFile(join(root, "README.md"), "# e2e\n");
    const serviceYaml =
      `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", IMAGE_AGENT])}\n` +
      `roles:\n  backend: {}\nisolation: container\nmemory_mb: 256\ncpu_cores: 1\n` +
      `container:\n  image: ${image.ok ? image.ref : "none"}\n`;
    await Deno.writeTextFile(join(root, "service.yaml"), serviceYaml);
    await Deno.writeTextFile(join(root, "plan.yaml"), planYaml([{ name: "s", steps: steps(c) }]));
    await sh(root, "add", "-A");
    await sh(root, "commit", "-q", "-m", "init");
    const run = watchedRun(root);
    await heldForReview(root, run, c.id, c.paths);
    const rows = await rowsOf(root, run.runId);
    assert.match(String(rowsFor(rows, "task_claimed", c.id)[0].data.isolation), /^container:/);
    await statusNames(root, c.id, c.paths);
    await cardNames(run.url, run.runId, c.id, c.paths);
    assert.equal(await fileAt(root, "main", "service.yaml"), serviceYaml, "main is untouched");
    await merge(run.url, run.runId, c.id);
    const result = await run.result;
    assert.equal(result.status, "completed", result.problems.join("; "));
    await landedAfterDecision(
      root,
      "main",
      c,
      (await journalOf(root, run.runId)).rows.map((r) => r.row),
      serviceYaml,
    );
  },
});

Deno.test("owned_files left by a diff is flagged in the journal and on the card; without enforce_owned_files it still lands", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [{
      id: "sprawl",
      owned: ["feature.txt"],
      script: [
        ["write", "feature.txt", "feature\n"],
        ["write", "README.md", "# rewritten by the agent\n"],
        ["report", "feature done"],
      ],
    }],
  }]);
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  const [flag] = rowsFor(rows, "task_owned_files_exceeded", "sprawl");
  assert.ok(flag, "task_owned_files_exceeded is journaled");
  assert.deepEqual(flag.data, {
    task_id: "sprawl",
    paths: ["README.md"],
    owned_files: ["feature.txt"],
    enforced: false,
  });
  assert.ok(
    rows.findIndex((r) => r === flag) <
      rows.findIndex((r) => r.type === "task_merged" && r.data.task_id === "sprawl"),
    "flagged before it merged",
  );
  assert.ok(
    run.lines.some((l) => /sprawl: its diff changes README\.md outside its owned_files/.test(l)),
    run.lines.join("\n"),
  );
  await using server = await serveRun(dir.path);
  const { column, html, entry } = await cardHtml(server.url, run.runId, "sprawl");
  assert.equal(column, "merged");
  assert.deepEqual(entry.owned_files_exceeded?.paths, ["README.md"]);
  assert.match(html, /OUTSIDE OWNED FILES<\/span> changes README\.md outside its owned_files/);
});

Deno.test("enforce_owned_files: true refuses a diff outside owned_files: each attempt is told why, the task FAILS with the reason in the terminal, status and on the board; nothing lands", async () => {
  await using dir = await tempDir();
  const outside = [["write", "feature.txt", "feature\n"], ["write", "README.md", "# mine now\n"]];
  await workspace(dir.path, [{
    name: "s",
    steps: [{
      id: "sprawl",
      owned: ["feature.txt"],
      script: [
        ["first_attempt", [...outside, ["report"]]],
        // The next attempt is told which files were refused (and does it again).
        ["retry", [["require_prompt", "outside the files you own"], ...outside, ["report"]]],
      ],
    }],
  }], "enforce_owned_files: true\n");
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "failed", run.lines.join("\n"));
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  assert.deepEqual(rowsFor(rows, "task_merged", "sprawl"), [], "nothing landed");
  assert.equal(await Deno.readTextFile(join(dir.path, "README.md")), "# e2e\n");
  const flags = rowsFor(rows, "task_owned_files_exceeded", "sprawl");
  assert.equal(flags.length, 3, "each of the three attempts was refused");
  assert.ok(flags.every((f) => f.data.enforced === true));
  const reason =
    /refused: its diff changes README\.md outside its owned_files \(feature\.txt\) and enforce_owned_files is on/;
  assert.match(String(rowsFor(rows, "task_failed", "sprawl")[0].data.reason), reason);
  // The terminal.
  assert.ok(run.lines.some((l) => reason.test(l)), run.lines.join("\n"));
  // `service status`.
  const status = (await cli(dir.path, "status")).out;
  assert.match(status, new RegExp(`sprawl FAILED: .*${reason.source}`));
  assert.match(
    status,
    /sprawl OUTSIDE OWNED FILES: its diff changes README\.md outside owned_files \(feature\.txt\); refused \(enforce_owned_files\)/,
  );
  // The board: the card is gated with the refusal as its receipt.
  await using server = await serveRun(dir.path);
  const { column, html } = await cardHtml(server.url, run.runId, "sprawl");
  assert.equal(column, "gated");
  assert.match(html, /REFUSED/);
  assert.match(
    html,
    /owned_files_exceeded: changes README\.md outside owned_files \(feature\.txt\)/,
  );
});

/** The board over `root` after its run ended. */
async function serveRun(root: string) {
  const server = await startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: [],
    announce: false,
    app: SERVER_APP,
  });
  return {
    url: server.url,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
