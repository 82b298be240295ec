/**
 * The board's operator actions over real HTTP (docs/board.md "New task and follow-ups"): creating
 * a task and sending a follow-up need scope operator, a same-origin JSON request and a sound
 * audit chain, and answer a signed receipt; the agent reads its own task's follow-ups only
 * (another task's are 403), with the credential the service minted for its session.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { mintAgentCredential } from "../lib/auth/agent_credentials.ts";
import { sha256Hex } from "../lib/journal/hash.ts";
import { runStarted } from "../lib/journal/events.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import { TaskStore } from "../lib/tasks/store.ts";
import { journalPath, workspacePaths } from "../lib/workspace.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { withEnv } from "./_e2e.ts";

const OP = "op-token-operator-actions";
const READER = "reader-token-operator-actions";
const NEW_TASK = "/dashboard/review-board/tasks";
const followUp = (id: string) => `/dashboard/review-board/tasks/${id}/follow-up`;

/**
 * A workspace with run `run-1` whose tasks `a` and `b` are claimed by sessions `s-a` and `s-b`,
 * task `idle` that waits, and the real server with an operator's and a reader's token.
 */
async function operatorServer() {
  const env = withEnv({ OPA_OP: OP, OPA_READER: READER });
  const root = await Deno.makeTempDir({ prefix: "operator-actions-" });
  const paths = workspacePaths(root);
  const store = await TaskStore.open(paths, { warn: () => {} });
  await store.create(
    [
      { id: "a", title: "A", role: "dev" },
      { id: "b", title: "B", role: "dev" },
      { id: "idle", title: "Idle", role: "dev" },
    ].map((t) => ({
      ...t,
      priority: 0,
      scope: "medium" as const,
      complexity: "medium" as const,
      depends_on: [],
      owned_files: [],
      completion_signals: [],
    })),
    { runId: "run-1" },
  );
  await store.claim("a", "s-a");
  await store.claim("b", "s-b");
  await store.close();
  await appendEvents(journalPath(paths, "run-1"), [runStarted({ run_id: "run-1" })]);
  const server = await startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: [
      { principal: "ops", scope: "operator", token_env: "OPA_OP" },
      { principal: "eyes", scope: "reader", token_env: "OPA_READER" },
    ],
    announce: false,
    app: SERVER_APP,
  });
  const call = async (
    method: string,
    path: string,
    o: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const res = await fetch(server.url + path, {
      method,
      headers: {
        ...(o.body !== undefined ? { "content-type": "application/json" } : {}),
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        ...o.headers,
      },
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
  };
  const auditLines = async () =>
    (await Deno.readTextFile(join(root, ".sdd/audit/audit.jsonl")).catch(() => ""))
      .split("\n").filter(Boolean);
  // One credential per session: minting again ends the earlier one, as a retry does.
  const credentials = new Map<string, string>();
  const agent = (task: string, session: string) => {
    if (!credentials.has(session)) {
      credentials.set(
        session,
        mintAgentCredential(root, { runId: "run-1", taskId: task, sessionId: session }),
      );
    }
    return credentials.get(session)!;
  };
  return {
    root,
    url: server.url,
    call,
    auditLines,
    agent,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      env[Symbol.dispose]();
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("POST /dashboard/review-board/tasks creates a signed task and says which run takes it", async () => {
  await using s = await operatorServer();
  const answer = await s.call("POST", NEW_TASK, {
    token: OP,
    body: { title: "Add /health", role: "dev", goal: "Serve 200", cli: "claude", priority: 3 },
    headers: { origin: s.url },
  });
  assert.equal(answer.status, 201, answer.text);
  assert.equal(answer.body.task.title, "Add /health");
  assert.equal(answer.body.task.status, "OPEN");
  assert.equal(answer.body.task.cli, "claude");
  assert.equal(answer.body.principal, "ops");
  assert.equal(answer.body.scope, "operator");
  // Run run-1 has unfinished tasks (a, b, idle): `service run` resumes it first.
  assert.equal(
    answer.body.runs_it,
    "no run is running: `service run` first resumes run run-1 (3 unfinished task(s)); once " +
      "that run ends, the next `service run` takes it",
  );
  const [line] = await s.auditLines();
  assert.equal(sha256Hex(line), answer.body.audit_event_hash);
  assert.equal(JSON.parse(line).event, "board.task_created");
  const listed = await s.call("GET", `/tasks/${answer.body.task.id}`, { token: READER });
  assert.equal(listed.status, 200);
});

Deno.test("POST /dashboard/review-board/tasks refuses every caller but a same-origin operator", async () => {
  await using s = await operatorServer();
  const form = { title: "x", role: "dev" };
  const cases: [string, Parameters<typeof s.call>[2], number, string][] = [
    ["no token", { body: form }, 401, "unauthorized"],
    ["a reader", { token: READER, body: form }, 403, "forbidden"],
    ["an agent's credential", { token: s.agent("a", "s-a"), body: form }, 403, "forbidden"],
    [
      "a foreign page (CSRF)",
      { token: OP, body: form, headers: { origin: "https://evil.example" } },
      403,
      "forbidden_origin",
    ],
    [
      "a cross-site fetch without Origin",
      { token: OP, body: form, headers: { "sec-fetch-site": "cross-site" } },
      403,
      "forbidden_origin",
    ],
    [
      "a text/plain form post",
      { token: OP, body: form, headers: { "content-type": "text/plain" } },
      415,
      "unsupported_media_type",
    ],
    ["a field the form does not have", { token: OP, body: { ...form, id: "x" } }, 400, ""],
    [
      "a title of 501 characters",
      { token: OP, body: { ...form, title: "t".repeat(501) } },
      400,
      "",
    ],
    ["an adapter that is a command", { token: OP, body: { ...form, cli: "sh -c id" } }, 400, ""],
  ];
  const before = (await s.call("GET", "/tasks", { token: OP })).body.tasks.length;
  for (const [name, o, status, code] of cases) {
    const answer = await s.call("POST", NEW_TASK, o);
    assert.equal(answer.status, status, `${name}: ${answer.text}`);
    if (code) assert.equal(answer.body.error.code, code, name);
  }
  assert.equal((await s.call("GET", "/tasks", { token: OP })).body.tasks.length, before);
  assert.deepEqual(await s.auditLines(), [], "nothing refused was signed");
});

Deno.test("a follow-up to a running task is signed, journaled and read by that task's agent only", async () => {
  await using s = await operatorServer();
  const sent = await s.call("POST", followUp("a"), {
    token: OP,
    body: { text: "  use the v2 API <b>now</b>\n" },
    headers: { origin: s.url },
  });
  assert.equal(sent.status, 201, sent.text);
  assert.equal(sent.body.follow_up.seq, 1);
  assert.equal(sent.body.follow_up.text, "use the v2 API <b>now</b>", "trimmed, kept as typed");
  assert.equal(sent.body.principal, "ops");
  assert.match(sent.body.delivery, /GET \/tasks\/a\/messages/);
  const [line] = await s.auditLines();
  assert.equal(sha256Hex(line), sent.body.audit_event_hash);
  const journal = await Deno.readTextFile(join(s.root, ".sdd/runs/run-1/journal.jsonl"));
  const row = journal.trimEnd().split("\n").map((l) => JSON.parse(l)).at(-1);
  assert.equal(row.type, "task_follow_up");
  assert.equal(row.data.audit_event_hash, sent.body.audit_event_hash);

  const own = await s.call("GET", "/tasks/a/messages", { token: s.agent("a", "s-a") });
  assert.equal(own.status, 200, own.text);
  assert.deepEqual(own.body.messages.map((m: { text: string }) => m.text), [
    "use the v2 API <b>now</b>",
  ]);
  const after = await s.call("GET", "/tasks/a/messages?after=1", { token: s.agent("a", "s-a") });
  assert.deepEqual(after.body.messages, []);
  const cases: [string, string, string | undefined, number][] = [
    ["task b's agent reading task a's", "/tasks/a/messages", s.agent("b", "s-b"), 403],
    ["task a's agent reading task b's", "/tasks/b/messages", s.agent("a", "s-a"), 403],
    ["an earlier session's credential", "/tasks/a/messages", s.agent("a", "s-old"), 403],
    ["a reader", "/tasks/a/messages", READER, 403],
    ["no token", "/tasks/a/messages", undefined, 401],
    ["a forged credential", "/tasks/a/messages", "svcagent_forged", 401],
    ["after that is not a number", "/tasks/a/messages?after=-1", s.agent("a", "s-a"), 400],
    ["after that is a path", "/tasks/a/messages?after=../x", s.agent("a", "s-a"), 400],
  ];
  for (const [name, path, token, status] of cases) {
    const answer = await s.call("GET", path, { token });
    assert.equal(answer.status, status, `${name}: ${answer.text}`);
    assert.ok(!answer.text.includes("v2 API"), `${name} reads nothing`);
  }
  const operator = await s.call("GET", "/tasks/a/messages", { token: OP });
  assert.equal(operator.status, 200);
});

Deno.test("a follow-up is refused, with nothing kept or signed, unless an operator sends plain text to a running task", async () => {
  await using s = await operatorServer();
  const cases: [string, string, Parameters<typeof s.call>[2], number, string][] = [
    [
      "a task that is not running",
      "idle",
      { token: OP, body: { text: "hi" } },
      409,
      "task_not_running",
    ],
    ["an unknown task", "nope", { token: OP, body: { text: "hi" } }, 404, "unknown_task"],
    [
      "a task id that is a path",
      "..%2Fa",
      { token: OP, body: { text: "hi" } },
      400,
      "invalid_task_id",
    ],
    ["an empty text", "a", { token: OP, body: { text: " \n " } }, 400, "invalid_follow_up"],
    [
      "4001 characters",
      "a",
      { token: OP, body: { text: "x".repeat(4001) } },
      400,
      "invalid_follow_up",
    ],
    [
      "a terminal escape",
      "a",
      { token: OP, body: { text: "\u001b]0;x\u0007" } },
      400,
      "invalid_follow_up",
    ],
    ["a NUL", "a", { token: OP, body: { text: "a\u0000" } }, 400, "invalid_follow_up"],
    ["text that is not a string", "a", { token: OP, body: { text: ["x"] } }, 400, ""],
    ["an extra field", "a", { token: OP, body: { text: "x", to: "b" } }, 400, ""],
    ["a reader", "a", { token: READER, body: { text: "hi" } }, 403, "forbidden"],
    [
      "the task's own agent",
      "a",
      { token: s.agent("a", "s-a"), body: { text: "hi" } },
      403,
      "forbidden",
    ],
    ["no token", "a", { body: { text: "hi" } }, 401, "unauthorized"],
    [
      "a foreign page (CSRF)",
      "a",
      { token: OP, body: { text: "hi" }, headers: { origin: "http://localhost:1" } },
      403,
      "forbidden_origin",
    ],
  ];
  for (const [name, task, o, status, code] of cases) {
    const answer = await s.call("POST", followUp(task), o);
    assert.equal(answer.status, status, `${name}: ${answer.text}`);
    if (code) assert.equal(answer.body.error.code, code, name);
  }
  assert.deepEqual(await s.auditLines(), [], "nothing refused was signed");
  const read = await s.call("GET", "/tasks/a/messages", { token: OP });
  assert.deepEqual(read.body.messages, []);
});
