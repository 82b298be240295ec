/**
 * `service doctor` on a fresh repository, as a first-time user meets it: each problem `service
 * run` would stop on (or trip over later) is named with its cause and its fix. Each row makes a
 * real git repository with a real library's files, runs the real CLI, and checks the check's line
 * and its fix line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { serveBoard, sh } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;
const CONFIG = "cli: claude\nroles:\n  backend: {}\n";

interface Case {
  name: string;
  /** Prepares the repository (its library files are written first). */
  setup: (dir: string) => Promise<void>;
  /** `service.yaml`'s text (default {@link CONFIG}). */
  config?: string;
  /** The check's line, and its fix line. */
  line: RegExp;
  fix: RegExp;
}

async function commitAll(dir: string): Promise<void> {
  await sh(dir, "add", "-A");
  await sh(dir, "commit", "-q", "-m", "semver 7.6.3");
}

const CASES: Case[] = [
  {
    name: "a repository without a commit fails the checkout, as `service run` would",
    setup: async () => {},
    line: /^FAIL {2}checkout: branch main has no commit yet$/m,
    fix: /^ {6}fix: commit once before `service run`$/m,
  },
  {
    name: "a detached HEAD fails the checkout",
    setup: async (dir) => {
      await commitAll(dir);
      await sh(dir, "checkout", "-q", "--detach");
    },
    line: /^FAIL {2}checkout: HEAD is detached$/m,
    fix: /^ {6}fix: check out the branch the work should land on$/m,
  },
  {
    name: "uncommitted changes are a warning naming them",
    setup: async (dir) => {
      await commitAll(dir);
      await Deno.writeTextFile(join(dir, "index.js"), "// edited\n", { append: true });
      await Deno.writeTextFile(join(dir, "notes.md"), "draft\n");
    },
    line:
      /^warn {2}checkout: branch main at [0-9a-f]{7,}, 2 uncommitted change\(s\) \(index\.js, notes\.md\): agents start from the last commit and do not see them/m,
    fix: /^ {6}fix: commit what the agents should build on \(`git add -A && git commit`\)/m,
  },
  {
    name: "a misspelt required key is a rename, not a second key",
    setup: commitAll,
    config: "cli: claude\nrole:\n  backend: {}\n",
    line:
      /^FAIL {2}config: ValidationError: .*service\.yaml:2:1: role: unknown key 'role' \(did you mean 'roles'\?\)$/m,
    fix: /^ {6}fix: rename 'role' to 'roles'$/m,
  },
  {
    name: "a misspelt adapter is named with the one meant, and the fix says where",
    setup: commitAll,
    config: "cli: claud\nroles:\n  backend: {}\n",
    line: /^FAIL {2}config: ValueError: Unknown adapter 'claud'\..*\(did you mean 'claude'\?\)$/m,
    fix: /^ {6}fix: set cli: claude in service\.yaml/m,
  },
  {
    name: "an unknown key in a role lists the keys a role has",
    setup: commitAll,
    config: "cli: claude\nroles:\n  backend: {modle: big}\n",
    line:
      /^FAIL {2}config: ValidationError: .*:3:13: roles\.backend\.modle: unknown key 'modle' \(did you mean 'model'\?\)$/m,
    fix: /^ {6}fix: rename 'modle' to 'model'$/m,
  },
];

/** A fresh repository holding a library's files (semver's layout), on branch main. */
async function library(dir: string): Promise<void> {
  await sh(dir, "init", "-q", "-b", "main");
  await sh(dir, "config", "user.email", "first-run@localhost");
  await sh(dir, "config", "user.name", "first run");
  await Deno.mkdir(join(dir, "functions"));
  await Deno.writeTextFile(join(dir, "package.json"), '{"name":"semver","version":"7.6.3"}\n');
  await Deno.writeTextFile(
    join(dir, "index.js"),
    "module.exports = require('./functions/parse')\n",
  );
  await Deno.writeTextFile(join(dir, "functions/parse.js"), "module.exports = (v) => v\n");
}

async function doctor(dir: string, env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", dir, "doctor"],
    env: { NO_COLOR: "1", ANTHROPIC_API_KEY: "k", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, text: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

for (const c of CASES) {
  Deno.test(`doctor on a fresh repository: ${c.name}`, async () => {
    await using ws = await tempDir();
    await library(ws.path);
    await Deno.writeTextFile(join(ws.path, "service.yaml"), c.config ?? CONFIG);
    await c.setup(ws.path);
    const r = await doctor(ws.path);
    assert.match(r.text, c.line, r.text);
    assert.match(r.text.slice(r.text.search(c.line)).split("\n")[1], c.fix, r.text);
    if (/^FAIL/m.test(r.text)) assert.equal(r.code, 1, r.text);
  });
}

Deno.test("doctor on a fresh repository: another workspace's task server on the port is named", async () => {
  await using ws = await tempDir();
  await using other = await tempDir();
  await library(ws.path);
  await Deno.writeTextFile(join(ws.path, "service.yaml"), CONFIG);
  await commitAll(ws.path);
  await library(other.path);
  await commitAll(other.path);
  await using server = await serveBoard(other.path);
  const port = new URL(server.url).port;
  const r = await doctor(ws.path, { SERVICE_PORT: port });
  assert.match(
    r.text,
    new RegExp(
      `^FAIL {2}port: 127\\.0\\.0\\.1:${port} is in use by the task server of another workspace \\(.*${
        other.path.split("/").at(-1)
      }\\)$`,
      "m",
    ),
    r.text,
  );
  assert.match(r.text, /^ {6}fix: stop it \(`service stop --root .*`\), or give this workspace/m);
  assert.equal(r.code, 1);
  // Its own server is fine.
  const own = await doctor(other.path, { SERVICE_PORT: port });
  assert.match(
    own.text,
    new RegExp(`^ok {4}port: the task server is running on 127\\.0\\.0\\.1:${port}$`, "m"),
    own.text,
  );
});

Deno.test("doctor on a fresh repository: a server that only claims this workspace in /status is not taken for it", async () => {
  await using ws = await tempDir();
  await library(ws.path);
  await Deno.writeTextFile(join(ws.path, "service.yaml"), CONFIG);
  await commitAll(ws.path);
  // Answers /status as a task server of this very workspace would, but cannot prove it.
  const claimant = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => Response.json({ service: "service", workspace: ws.path }),
  );
  try {
    const port = String(claimant.addr.port);
    const r = await doctor(ws.path, { SERVICE_PORT: port });
    assert.match(
      r.text,
      new RegExp(
        `^FAIL {2}port: 127\\.0\\.0\\.1:${port} is in use by a task server that does not prove it serves this workspace`,
        "m",
      ),
      r.text,
    );
    assert.equal(r.code, 1);
  } finally {
    await claimant.shutdown();
  }
});
