import assert from "node:assert/strict";
import { join } from "node:path";
import { createApp } from "./_app.ts";
import { appContext } from "../lib/server/serve.ts";
import { eventsHandler } from "./events.ts";
import { ActivityHub } from "../lib/events/hub.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import type { EventsOptions } from "./events.ts";

interface Harness extends AsyncDisposable {
  app: ReturnType<typeof createApp>;
  hub: ActivityHub;
  root: string;
  closing: AbortController;
  ended: Promise<void>;
}

async function harness(options: EventsOptions & { tokenEnv?: string } = {}): Promise<Harness> {
  const root = await Deno.makeTempDir();
  const hub = new ActivityHub();
  const closing = new AbortController();
  let ended!: () => void;
  const endedPromise = new Promise<void>((r) => ended = r);
  const tokens = options.tokenEnv
    ? [{ principal: "ops", scope: "operator" as const, token_env: options.tokenEnv }]
    : [];
  const ctx = { ...appContext(root, tokens), closing: closing.signal };
  const app = createApp(ctx, {
    overrides: {
      "/events": {
        GET: eventsHandler({ hub, watch: { pollMs: 100 }, ...options, onStreamEnd: ended }),
      },
    },
  });
  return {
    app,
    hub,
    root,
    closing,
    ended: endedPromise,
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  pattern: RegExp,
): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  while (!pattern.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${pattern}: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

Deno.test("GET /events opens with a ready frame and relays published activity", async () => {
  await using h = await harness();
  const res = await h.app.request("/events");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
  const reader = res.body!.getReader();
  assert.match(await readUntil(reader, /event: ready/), /retry: 1000/);
  h.hub.publish("task_status", { task_id: "t1", status: "DONE" });
  const frame = await readUntil(reader, /event: activity\ndata: .*\n/);
  assert.match(frame, /data: \{"task_id":"t1","status":"DONE","kind":"task_status"\}/);
  await reader.cancel();
  await h.ended;
  assert.equal(h.hub.size, 0);
});

Deno.test("GET /events signals a journal append in any run", async () => {
  await using h = await harness();
  const res = await h.app.request("/events");
  const reader = res.body!.getReader();
  await readUntil(reader, /event: ready/);
  await new Promise((r) => setTimeout(r, 50));
  const journal = join(h.root, ".sdd", "runs", "r-live", "journal.jsonl");
  await appendEvents(journal, [{ type: "run_started", data: { run_id: "r-live" } }]);
  const frame = await readUntil(reader, /"run_id":"r-live"/);
  assert.match(frame, /"kind":"journal_appended"/);
  await reader.cancel();
  await h.ended;
});

Deno.test("GET /events sends a heartbeat comment when nothing happens", async () => {
  await using h = await harness({ heartbeatMs: 30 });
  const reader = (await h.app.request("/events")).body!.getReader();
  await readUntil(reader, /: heartbeat\n\n/);
  await reader.cancel();
  await h.ended;
});

Deno.test("GET /events ends its stream when the server shuts down", async () => {
  await using h = await harness();
  const reader = (await h.app.request("/events")).body!.getReader();
  await readUntil(reader, /event: ready/);
  h.closing.abort();
  while (!(await reader.read()).done) { /* drain */ }
  await h.ended;
});

Deno.test("GET /events needs the bearer token, from the header or ?access_token=", async () => {
  const name = `EVENTS_TEST_TOKEN_${crypto.randomUUID().slice(0, 8)}`;
  Deno.env.set(name, "s3cret-token");
  try {
    await using h = await harness({ tokenEnv: name });
    const refused = await h.app.request("/events");
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error.code, "unauthorized");
    const wrong = await h.app.request("/events?access_token=nope");
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    for (const init of [{ headers: { authorization: "Bearer s3cret-token" } }, {}]) {
      const path = "headers" in init ? "/events" : "/events?access_token=s3cret-token";
      const res = await h.app.request(path, init);
      assert.equal(res.status, 200);
      await res.body!.cancel();
      await h.ended;
    }
    const elsewhere = await h.app.request("/review-board/runs?access_token=s3cret-token");
    assert.equal(elsewhere.status, 401, "the query token is accepted on /events only");
    await elsewhere.body?.cancel();
  } finally {
    Deno.env.delete(name);
  }
});
