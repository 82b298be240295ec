/**
 * POST /webhooks/trackers/<adapter_name> through the real app over a real workspace: every
 * outcome of spec §3.4 / §7.1 and DESIGN.md §6, the ledger across restarts, concurrency, and
 * the tickets the five built-in trackers' real payloads become.
 */
import assert from "node:assert/strict";
import { testWorkspace } from "./_workspace.ts";
import { signBody } from "../lib/webhooks/signature.ts";
import { deliver, type Delivery, fixture, webhookWorkspace } from "./_webhooks.ts";
import { closeTrackerService } from "../lib/trackers/service.ts";

Deno.test("webhook: GitHub-style delivery accepted once, then replay; the ticket becomes one task", async () => {
  await using ws = await webhookWorkspace();
  const body = await fixture("github_issues_opened.json");
  const secret = ws.secret("tracker_b");
  const first = await deliver(ws, "tracker_b", {
    body,
    secret,
    id: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
  });
  assert.equal(first.status, 200);
  assert.equal(first.body.status, "accepted");
  assert.equal(first.body.delivery_id, "72d3162e-cc78-11e3-81ab-4c9367dc0958");
  assert.deepEqual(first.body.tickets, [{
    ref: "octo-org/app#42",
    action: "created",
    task_id: "tracker_b-octo-org-app-42",
  }]);
  const again = await deliver(ws, "tracker_b", {
    body,
    secret,
    id: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
  });
  assert.equal(again.status, 200);
  assert.equal(again.body.status, "replay");
  const tasks = (await ws.call("GET", "/tasks")).body.tasks;
  assert.equal(tasks.length, 1);
  assert.equal(tasks[0].title, "Parser rejects trailing commas");
  assert.equal(
    tasks[0].goal,
    'Parser rejects trailing commas\n\n`parse("[1,2,]")` throws. It should accept a trailing comma.',
  );
  assert.equal(tasks[0].role, "backend");
  assert.equal(tasks[0].source.url, "https://github.com/octo-org/app/issues/42");
  await ws.flush();
  const ledger = await Deno.readTextFile(`${ws.root}/.sdd/runtime/tracker_webhook_ledger.jsonl`);
  assert.equal(ledger.trim().split("\n").length, 1);
});

Deno.test("webhook: the hostile-delivery catalogue gets 401 and writes nothing", async () => {
  await using ws = await webhookWorkspace();
  const body = await fixture("github_issues_opened.json");
  const secret = ws.secret("tracker_b");
  const good = signBody("hub-sha256", secret, body);
  const reencoded = JSON.stringify(JSON.parse(body));
  const CASES: [string, string, Delivery][] = [
    ["no signature header", "tracker_b", { body, signature: null }],
    ["forged signature", "tracker_b", { body, signature: `sha256=${"ab".repeat(32)}` }],
    ["truncated signature", "tracker_b", { body, signature: good.slice(0, 30) }],
    ["signature without prefix", "tracker_b", { body, signature: good.slice(7) }],
    ["re-encoded body under the original signature", "tracker_b", {
      body: reencoded,
      signature: good,
    }],
    ["signed with another tracker's secret", "tracker_b", { body, secret: ws.secret("tracker_a") }],
    ["tracker_b's delivery sent to tracker_d", "tracker_d", { body, signature: good }],
    ["tracker_b's delivery sent to tracker_a's raw hex", "tracker_d", {
      body,
      signature: good.slice(7),
    }],
    ["tracker_c token wrong", "tracker_c", { body, signature: "not-the-token" }],
    ["tracker_c token truncated", "tracker_c", {
      body,
      signature: ws.secret("tracker_c").slice(0, -1),
    }],
    ["empty signature", "tracker_e", { body, signature: "" }],
  ];
  for (const [name, adapter, d] of CASES) {
    const r = await deliver(ws, adapter, { secret, ...d });
    assert.equal(r.status, 401, name);
    assert.equal(r.body.error.code, "invalid_signature", name);
  }
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 0);
  await ws.flush();
  const ledger = await Deno.readTextFile(`${ws.root}/.sdd/runtime/tracker_webhook_ledger.jsonl`)
    .catch(() => "");
  assert.equal(ledger, "");
});

Deno.test("webhook: 404 unknown adapter, 503 disabled or secret empty, 400 invalid_payload, 413 over 5 MiB", async () => {
  await using ws = await webhookWorkspace(
    "  custom_x:\n    webhook: { enabled: false, secret_env: NOPE }\n",
  );
  const secret = ws.secret("tracker_b");
  const unknown = await deliver(ws, "tracker_zz", { body: "{}", secret });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, "unknown_adapter");

  Deno.env.delete(ws.env.tracker_d);
  const empty = await deliver(ws, "tracker_d", { body: "{}", secret: "" });
  assert.equal(empty.status, 503);
  assert.match(empty.body.error.message, new RegExp(ws.env.tracker_d));
  assert.doesNotMatch(JSON.stringify(empty.body), /secret-of/);

  const notJson = await deliver(ws, "tracker_b", { body: "not json{", secret, id: "bad-1" });
  assert.equal(notJson.status, 400);
  assert.equal(notJson.body.error.code, "invalid_payload");
  // The id was not recorded: the same delivery id with a good body is accepted.
  const fixed = await deliver(ws, "tracker_b", { body: "{}", secret, id: "bad-1" });
  assert.equal(fixed.body.status, "accepted");

  const big = new Uint8Array(5 * 1024 * 1024 + 1).fill(0x20);
  const tooBig = await deliver(ws, "tracker_b", { body: big, signature: "sha256=00" });
  assert.equal(tooBig.status, 413);
  const exactly = new Uint8Array(5 * 1024 * 1024).fill(0x20);
  exactly[0] = 0x7b; // "{"
  exactly[exactly.length - 1] = 0x7d; // "}"
  const limit = await deliver(ws, "tracker_b", { body: exactly, secret });
  assert.equal(limit.status, 200);
});

Deno.test("webhook: a disabled webhook answers 503 so the tracker stops retrying", async () => {
  Deno.env.set("WH_DISABLED_TEST", "x");
  await using ws = await testWorkspace({
    config:
      "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n    webhook: { enabled: false, secret_env: WH_DISABLED_TEST }\n",
  });
  const r = await deliver(ws, "tracker_b", { body: "{}", secret: "x" });
  assert.equal(r.status, 503);
  assert.equal(r.body.error.code, "webhook_disabled");
  const unconfigured = await deliver(ws, "tracker_c", { body: "{}", secret: "x" });
  assert.equal(unconfigured.status, 503);
});

Deno.test("webhook: no bearer token on the route even when tokens are configured", async () => {
  // A variable of its own: SERVICE_TOKEN is process-wide and other test files run alongside.
  const variable = `WH_TOKEN_${Deno.pid}`;
  Deno.env.set(variable, "tok-webhook-test");
  try {
    await using ws = await webhookWorkspace("", {
      tokens: [{ principal: "op", scope: "operator", token_env: variable }],
    });
    const tasks = await ws.call("GET", "/tasks");
    assert.equal(tasks.status, 401);
    const r = await deliver(ws, "tracker_b", { body: "{}", secret: ws.secret("tracker_b") });
    assert.equal(r.status, 200);
  } finally {
    Deno.env.delete(variable);
  }
});

Deno.test("webhook: the secret is read per request (rotation) and from <secret_env>_FILE", async () => {
  await using ws = await webhookWorkspace();
  const variable = ws.env.tracker_b;
  Deno.env.set(variable, "old");
  assert.equal((await deliver(ws, "tracker_b", { body: "{}", secret: "old" })).status, 200);
  Deno.env.set(variable, "new");
  assert.equal((await deliver(ws, "tracker_b", { body: "{}", secret: "old" })).status, 401);
  assert.equal((await deliver(ws, "tracker_b", { body: "{}", secret: "new" })).status, 200);
  Deno.env.delete(variable);
  const file = `${ws.root}/secret.txt`;
  await Deno.writeTextFile(file, "from-file\n");
  Deno.env.set(`${variable}_FILE`, file);
  try {
    assert.equal((await deliver(ws, "tracker_b", { body: "{}", secret: "from-file" })).status, 200);
  } finally {
    Deno.env.delete(`${variable}_FILE`);
  }
});

Deno.test("webhook: without a delivery id the SHA-256 of the body is the key; keys are per adapter", async () => {
  await using ws = await webhookWorkspace();
  const body = '{"hello":"world"}';
  const a = await deliver(ws, "tracker_b", { body, secret: ws.secret("tracker_b"), id: null });
  assert.equal(a.body.status, "accepted");
  assert.match(a.body.delivery_id, /^sha256:[0-9a-f]{64}$/);
  const b = await deliver(ws, "tracker_b", { body, secret: ws.secret("tracker_b"), id: null });
  assert.equal(b.body.status, "replay");
  const other = await deliver(ws, "tracker_d", { body, secret: ws.secret("tracker_d"), id: null });
  assert.equal(other.body.status, "accepted");
});

Deno.test("webhook: a replay after a restart is still a replay", async () => {
  await using ws = await webhookWorkspace();
  const body = await fixture("gitlab_issue_open.json");
  const secret = ws.secret("tracker_c");
  const first = await deliver(ws, "tracker_c", { body, secret, id: "uuid-restart" });
  assert.equal(first.body.status, "accepted");
  await closeTrackerService(ws.ctx); // the server stops; the next request opens it again
  await ws.flush();
  const again = await deliver(ws, "tracker_c", { body, secret, id: "uuid-restart" });
  assert.equal(again.body.status, "replay");
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 1);
});

Deno.test("webhook: a torn ledger tail is repaired on start and its good ids still replay", async () => {
  await using ws = await webhookWorkspace();
  await Deno.mkdir(`${ws.root}/.sdd/runtime`, { recursive: true });
  await Deno.writeTextFile(
    `${ws.root}/.sdd/runtime/tracker_webhook_ledger.jsonl`,
    '{"adapter":"tracker_b","key":"kept-1","at":"2026-11-20T10:00:00.000Z"}\n{"adapter":"tracker_b","ke',
  );
  const r = await deliver(ws, "tracker_b", {
    body: "{}",
    secret: ws.secret("tracker_b"),
    id: "kept-1",
  });
  assert.equal(r.body.status, "replay");
  const n = await deliver(ws, "tracker_b", {
    body: "{}",
    secret: ws.secret("tracker_b"),
    id: "new-1",
  });
  assert.equal(n.body.status, "accepted");
  await ws.flush();
  const names = [...Deno.readDirSync(`${ws.root}/.sdd/runtime`)].map((e) => e.name);
  assert.ok(names.some((f) => f.startsWith("tracker_webhook_ledger.jsonl.corrupt-")), names.join());
});

Deno.test("webhook: 40 concurrent identical deliveries: one accepted, 39 replays, one task", async () => {
  await using ws = await webhookWorkspace();
  const body = await fixture("linear_issue_create.json");
  const secret = ws.secret("tracker_d");
  const results = await Promise.all(
    Array.from(
      { length: 40 },
      () => deliver(ws, "tracker_d", { body, secret, id: "same-delivery" }),
    ),
  );
  assert.equal(results.filter((r) => r.body.status === "accepted").length, 1);
  assert.equal(results.filter((r) => r.body.status === "replay").length, 39);
  // Different delivery ids about the same ticket: still one task (idempotent by ticket key).
  await Promise.all(
    Array.from({ length: 10 }, () => deliver(ws, "tracker_d", { body, secret })),
  );
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 1);
});

Deno.test("webhook: non-issue events are accepted and ignored", async () => {
  await using ws = await webhookWorkspace();
  const ping = await deliver(ws, "tracker_b", {
    body: await fixture("github_ping.json"),
    secret: ws.secret("tracker_b"),
    headers: { "X-GitHub-Event": "ping" },
  });
  assert.equal(ping.status, 200);
  assert.equal(ping.body.status, "accepted");
  assert.deepEqual(ping.body.tickets, []);
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 0);
});

Deno.test("webhook: a GitHub delivery that names no event is not an issue event", async () => {
  await using ws = await webhookWorkspace();
  const r = await deliver(ws, "tracker_b", {
    body: await fixture("github_issues_opened.json"),
    secret: ws.secret("tracker_b"),
    event: null,
  });
  assert.equal(r.body.status, "accepted");
  assert.deepEqual(r.body.tickets, []);
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 0);
});

Deno.test("webhook: a signed body with fields of the wrong type answers 400 invalid_payload, not recorded", async () => {
  await using ws = await webhookWorkspace();
  // deno-lint-ignore no-explicit-any
  const CASES: [string, string, (p: any) => void][] = [
    ["tracker_b", "github_issues_opened.json", (p) => p.issue.number = "forty-two"],
    ["tracker_b", "github_issues_opened.json", (p) => p.issue.number = { n: 42 }],
    ["tracker_c", "gitlab_issue_open.json", (p) => p.object_attributes.iid = "x"],
    ["tracker_d", "linear_issue_create.json", (p) => p.data.id = { id: 1 }],
    ["tracker_e", "plane_issue_created.json", (p) => p.data.id = ["x"]],
    ["tracker_a", "jira_issue_created.json", (p) => p.issue.fields.description.content = "x"],
  ];
  for (const [i, [tracker, file, edit]] of CASES.entries()) {
    const payload = JSON.parse(await fixture(file));
    edit(payload);
    const id = `typed-${i}`;
    const secret = ws.secret(tracker);
    const r = await deliver(ws, tracker, { body: JSON.stringify(payload), secret, id });
    if (tracker === "tracker_a") {
      // A description of an odd shape is read as text, not refused.
      assert.equal(r.status, 200, JSON.stringify(r.body));
      continue;
    }
    assert.equal(r.status, 400, `${tracker}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.code, "invalid_payload");
    assert.match(
      r.body.error.message,
      new RegExp(`^a field of the ${tracker} payload has the wrong type: the ticket`),
    );
    assert.ok(r.body.error.message.length < 200, "a sentence, not a validation dump");
    // Not recorded: the same id with a sound body is accepted.
    const fixed = await deliver(ws, tracker, { body: await fixture(file), secret, id });
    assert.equal(fixed.body.status, "accepted", tracker);
  }
});

Deno.test("webhook: trackers.<name>.module loads a third-party handler (default export or registerHandler)", async () => {
  Deno.env.set("WH_CUSTOM_SECRET", "custom-secret");
  const dir = await Deno.makeTempDir({ prefix: "handler-mod-" });
  const registry = new URL("../lib/webhooks/registry.ts", import.meta.url).href;
  await Deno.writeTextFile(
    `${dir}/acme.ts`,
    `export default {
  scheme: "raw-hex",
  signatureHeaders: ["X-Acme-Signature"],
  deliveryHeaders: ["X-Acme-Delivery"],
  tickets(payload, _headers, context) {
    return [{ tracker: context.tracker, key: String(payload.id), ref: "ACME-" + payload.id,
      title: payload.title, body: "", labels: [], state: "open", url: "", raw: {} }];
  },
};
`,
  );
  await Deno.writeTextFile(
    `${dir}/beta.ts`,
    `import { registerHandler } from ${JSON.stringify(registry)};
registerHandler("beta", { scheme: "token", signatureHeaders: ["X-Beta-Token"], deliveryHeaders: [],
  tickets: () => [] });
`,
  );
  try {
    await using ws = await testWorkspace({
      config: `cli: claude\nroles: [backend]\ntrackers:\n` +
        `  acme:\n    module: ${dir}/acme.ts\n    webhook: { enabled: true, secret_env: WH_CUSTOM_SECRET }\n` +
        `  beta:\n    module: ${dir}/beta.ts\n    webhook: { enabled: true, secret_env: WH_CUSTOM_SECRET }\n`,
    });
    const body = '{"id":7,"title":"Custom ticket"}';
    const res = await ws.app.request("/webhooks/trackers/acme", {
      method: "POST",
      headers: {
        "X-Acme-Signature": signBody("raw-hex", "custom-secret", body),
        "X-Acme-Delivery": "d1",
      },
      body,
    });
    const answer = await res.json();
    assert.equal(res.status, 200);
    assert.deepEqual(answer.tickets, [{
      ref: "ACME-7",
      action: "created",
      task_id: "acme-ACME-7",
    }]);
    const beta = await ws.app.request("/webhooks/trackers/beta", {
      method: "POST",
      headers: { "X-Beta-Token": "custom-secret" },
      body: "{}",
    });
    assert.equal(beta.status, 200);
    await beta.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("webhook: a streamed (chunked) body past 5 MiB is cut off with 413, never buffered whole", async () => {
  await using ws = await webhookWorkspace();
  let sent = 0;
  const chunk = new Uint8Array(256 * 1024).fill(0x20);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= 64 * 1024 * 1024) return controller.close(); // 64 MiB offered
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
  const res = await ws.app.request("/webhooks/trackers/tracker_b", {
    method: "POST",
    headers: { "X-Hub-Signature-256": "sha256=00" },
    body,
  });
  assert.equal(res.status, 413);
  assert.equal((await res.json()).error.code, "body_too_large");
  assert.ok(sent <= 6 * 1024 * 1024, `read ${sent} bytes`);
});

Deno.test("webhook: a 401 names the signature header the sender used (Linear-Signature), or every one it accepts when none came", async () => {
  await using ws = await webhookWorkspace();
  const body = await fixture("linear_issue_create.json");
  const wrong = signBody("raw-hex", "not-the-secret", body);
  const forged = await deliver(ws, "tracker_d", {
    body,
    signature: null,
    headers: { "Linear-Signature": wrong, "Linear-Delivery": crypto.randomUUID() },
  });
  assert.equal(forged.status, 401);
  assert.match(forged.body.error.message, /^Linear-Signature does not match the body under /);
  const missing = await deliver(ws, "tracker_d", { body, signature: null });
  assert.equal(missing.status, 401);
  assert.equal(
    missing.body.error.message,
    "missing Tracker-D-Signature or Linear-Signature header",
  );
});

Deno.test("webhook: a GitHub delivery sent with GitHub's default content type (a form whose `payload` field holds the JSON) makes the same task as a JSON one; a form without it is 400 saying what to send", async () => {
  await using ws = await webhookWorkspace();
  const json = await fixture("github_issues_opened.json");
  const secret = ws.secret("tracker_b");
  const form = "payload=" + encodeURIComponent(json); // what GitHub sends, signed as sent
  const headers = { "content-type": "application/x-www-form-urlencoded" };
  const r = await deliver(ws, "tracker_b", { body: form, secret, headers, id: "form-1" });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.tickets, [{
    ref: "octo-org/app#42",
    action: "created",
    task_id: "tracker_b-octo-org-app-42",
  }]);
  const [task] = (await ws.call("GET", "/tasks")).body.tasks;
  assert.equal(task.title, "Parser rejects trailing commas");
  const replay = await deliver(ws, "tracker_b", { body: form, secret, headers, id: "form-1" });
  assert.equal(replay.body.status, "replay");

  const CASES: [string, RegExp][] = [
    ["zen=hi", /signed form body has no `payload` field: .*content type application\/json/],
    ["payload=%7Bnot", /the `payload` field of the signed form is not UTF-8 JSON/],
  ];
  for (const [body, message] of CASES) {
    const bad = await deliver(ws, "tracker_b", { body, secret, headers });
    assert.equal(bad.status, 400, body);
    assert.equal(bad.body.error.code, "invalid_payload");
    assert.match(bad.body.error.message, message);
  }
  assert.equal((await ws.call("GET", "/tasks")).body.tasks.length, 1);
});
