/** `service integrations list` and `service preview` through the real CLI. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, tempDir } from "./helpers.ts";
import { TUNNEL_PROGRAMS } from "../lib/tunnel/tunnel.ts";
import { processAlive } from "../lib/util/process_alive.ts";

function run(root: string, args: string[], env: Record<string, string> = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  });
}

async function output(root: string, args: string[], env: Record<string, string> = {}) {
  const out = await run(root, args, env).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

const CONFIG = `cli: claude
roles: [backend]
trackers:
  tracker_b:
    webhook: { enabled: true, secret_env: INTEG_B_SECRET, public_url_base: "https://hooks.example.test/" }
    project: octo/app
    polling: false
    comment_on_land: true
  tracker_c:
    project: group/app
    poll_interval_s: 120
  tracker_d:
    project: ENG
    webhook: { enabled: false, secret_env: INTEG_D_SECRET }
`;

Deno.test("integrations list: mode, variables set (never values), URL to register, last events; --json", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "service.yaml"), CONFIG);
  await Deno.mkdir(join(dir.path, ".sdd/runtime"), { recursive: true });
  await Deno.writeTextFile(
    join(dir.path, ".sdd/runtime/trackers.json"),
    JSON.stringify({
      tracker_b: {
        last_delivery: {
          at: "2026-11-23T08:00:00.000Z",
          status: 401,
          outcome: "invalid_signature",
          detail: "X-Hub-Signature-256 does not match",
        },
      },
      tracker_c: {
        last_poll: {
          at: "2026-11-23T08:01:00.000Z",
          outcome: "ok",
          detail: "3 ticket(s), 1 new task(s)",
        },
      },
    }),
  );
  const env = { INTEG_B_SECRET: "super-secret-value", TRACKER_D_TOKEN: "lin-token-value" };
  const json = await output(dir.path, ["integrations", "list", "--json"], env);
  assert.equal(json.code, 0, json.stderr);
  assert.doesNotMatch(json.stdout, /super-secret-value|lin-token-value/);
  const rows = Object.fromEntries(
    JSON.parse(json.stdout).integrations.map((r: { adapter: string }) => [r.adapter, r]),
  );
  assert.deepEqual(Object.keys(rows), [
    "tracker_a",
    "tracker_b",
    "tracker_c",
    "tracker_d",
    "tracker_e",
  ]);
  assert.equal(rows.tracker_a.configured, false);
  assert.equal(rows.tracker_b.mode, "webhook");
  assert.equal(rows.tracker_b.secret_set, true);
  assert.equal(
    rows.tracker_b.webhook_url,
    "https://hooks.example.test/webhooks/trackers/tracker_b",
  );
  assert.equal(rows.tracker_b.last_delivery.outcome, "invalid_signature");
  assert.equal(rows.tracker_b.project, "octo/app");
  assert.equal(rows.tracker_b.missed_deliveries, "lost: TRACKER_B_TOKEN is empty");
  assert.equal(rows.tracker_c.mode, "polling every 120s");
  assert.equal(rows.tracker_c.token_env, "TRACKER_C_TOKEN");
  assert.equal(rows.tracker_c.token_set, false);
  assert.equal(rows.tracker_c.last_poll.outcome, "ok");
  assert.equal(rows.tracker_d.mode, "polling every 60s");
  assert.equal(rows.tracker_d.webhook_enabled, false);
  assert.equal(rows.tracker_d.secret_set, false);
  assert.equal(rows.tracker_d.token_set, true);
  assert.equal(rows.tracker_d.problem, null);

  const text = await output(dir.path, ["integrations", "list"], env);
  assert.equal(text.code, 0);
  assert.doesNotMatch(text.stdout, /super-secret-value|lin-token-value/);
  assert.match(
    text.stdout,
    /tracker_b \(GitHub\): webhook\n {2}webhook secret INTEG_B_SECRET: set\n {2}register: https:\/\/hooks\.example\.test\/webhooks\/trackers\/tracker_b/,
  );
  assert.match(text.stdout, /last delivery: 2026-11-23T08:00:00\.000Z 401 invalid_signature/);
  assert.match(text.stdout, /tracker_c \(GitLab\): polling every 120s/);
  assert.match(
    text.stdout,
    /project: octo\/app \(tickets of other projects are ignored\)\n {2}deliveries sent while the service is down: lost: TRACKER_B_TOKEN is empty/,
  );
  assert.match(text.stdout, /tracker_a \(Jira\): not configured/);
  const noSecret = await output(dir.path, ["integrations", "list"]);
  assert.match(noSecret.stdout, /webhook secret INTEG_B_SECRET: EMPTY — deliveries get 503/);
  assert.match(noSecret.stdout, /cannot poll: TRACKER_D_TOKEN is empty/);
});

const CLOUDFLARED_STAND_IN = `#!/bin/sh
# Prints what cloudflared prints for a quick tunnel, then runs until signalled.
echo $$ > "$STAND_IN_PID_FILE"
echo "$@" > "$STAND_IN_ARGS_FILE"
/bin/cat >&2 <<'OUT'
2026-11-23T08:00:00Z INF Thank you for trying Cloudflare Tunnel. Doing so, without a Cloudflare account, is a quick way to experiment and try it out.
2026-11-23T08:00:00Z INF Requesting new quick Tunnel on trycloudflare.com...
2026-11-23T08:00:01Z INF +--------------------------------------------------------------------------------------------+
2026-11-23T08:00:01Z INF |  Your quick Tunnel has been created! Visit it at (it may take some time to be reachable):  |
2026-11-23T08:00:01Z INF |  https://seasonal-deck-organisms-sf.trycloudflare.com                                      |
2026-11-23T08:00:01Z INF +--------------------------------------------------------------------------------------------+
OUT
exec /bin/sleep 600
`;

Deno.test("preview: starts the installed tunnel, prints the webhook URLs, stops the tunnel on Ctrl-C", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "service.yaml"), CONFIG);
  const bin = join(dir.path, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(join(bin, "cloudflared"), CLOUDFLARED_STAND_IN, { mode: 0o755 });
  const pidFile = join(dir.path, "tunnel.pid");
  const argsFile = join(dir.path, "tunnel.args");
  const child = run(dir.path, ["preview", "--port", "18999"], {
    PATH: bin,
    STAND_IN_PID_FILE: pidFile,
    STAND_IN_ARGS_FILE: argsFile,
    INTEG_B_SECRET: "x",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = Date.now() + 60_000;
  while (!seen.includes("press Ctrl-C")) {
    assert.ok(Date.now() < deadline, `no URLs printed: ${seen}`);
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
  }
  assert.match(
    seen,
    /public URL: https:\/\/seasonal-deck-organisms-sf\.trycloudflare\.com → http:\/\/127\.0\.0\.1:18999 \(cloudflared\)/,
  );
  assert.match(
    seen,
    /tracker_b\s+https:\/\/seasonal-deck-organisms-sf\.trycloudflare\.com\/webhooks\/trackers\/tracker_b\s+\(secret INTEG_B_SECRET set\)/,
  );
  assert.match(
    seen,
    /tracker_d\s+https:\/\/seasonal-deck-organisms-sf\.trycloudflare\.com\/webhooks\/trackers\/tracker_d\s+\(webhook disabled: set enabled: true\)/,
  );
  assert.equal(
    (await Deno.readTextFile(argsFile)).trim(),
    "tunnel --no-autoupdate --url http://127.0.0.1:18999",
  );
  const tunnelPid = Number((await Deno.readTextFile(pidFile)).trim());
  assert.ok(processAlive(tunnelPid));
  child.kill("SIGINT");
  const status = await child.status;
  await reader.cancel();
  const stderr = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
  assert.equal(status.code, 0, stderr);
  assert.match(stderr, /tunnel stopped/);
  assert.equal(processAlive(tunnelPid), false, "the tunnel program was stopped with preview");
});

Deno.test("preview: with no tunnel program installed it says which to install and exits 1", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, "empty"));
  const r = await output(dir.path, ["preview", "--port", "18999"], {
    PATH: join(dir.path, "empty"),
  });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /no tunnel program \(cloudflared, ngrok, bore\) on PATH; install one of them:/,
  );
  for (const name of ["cloudflared", "ngrok", "bore"]) {
    assert.match(r.stderr, new RegExp(`${name}: `));
  }
});

Deno.test("tunnel programs: each one's announcement line gives the public URL", () => {
  const url = (name: string, line: string) =>
    TUNNEL_PROGRAMS.find((p) => p.name === name)!.publicUrl(line);
  assert.equal(
    url("cloudflared", "INF |  https://a-b-c.trycloudflare.com   |"),
    "https://a-b-c.trycloudflare.com",
  );
  assert.equal(
    url("cloudflared", "INF Requesting new quick Tunnel on trycloudflare.com..."),
    undefined,
  );
  assert.equal(
    url(
      "ngrok",
      '{"addr":"http://localhost:8052","lvl":"info","msg":"started tunnel","name":"command_line","obj":"tunnels","t":"2026-11-23T08:00:00Z","url":"https://1a2b-3c4d.ngrok-free.app"}',
    ),
    "https://1a2b-3c4d.ngrok-free.app",
  );
  assert.equal(
    url("ngrok", 't=2026 lvl=info msg="started tunnel" url=https://x.ngrok.io'),
    "https://x.ngrok.io",
  );
  assert.equal(
    url("bore", "2026-11-23T08:00:00Z  INFO bore_cli::client: listening at bore.pub:41379"),
    "http://bore.pub:41379",
  );
});
