import assert from "node:assert/strict";
import { git, GitError, gitText, resolveCommit, splitZ } from "./git.ts";
import { tempRepo } from "./_test_repo.ts";

Deno.test("git() returns stdout and throws GitError with args, code and stderr on failure", async () => {
  await using repo = await tempRepo();
  assert.equal(await gitText(["rev-parse", "--abbrev-ref", "HEAD"], { cwd: repo.root }), "main");
  await assert.rejects(
    () => git(["rev-parse", "--verify", "no-such-branch"], { cwd: repo.root }),
    (e: unknown) => {
      assert.ok(e instanceof GitError);
      assert.deepEqual(e.args, ["rev-parse", "--verify", "no-such-branch"]);
      assert.equal(e.code, 128);
      assert.match(e.stderr, /Needed a single revision/);
      return true;
    },
  );
});

Deno.test("git() with allowFailure returns the exit code instead of throwing", async () => {
  await using repo = await tempRepo();
  const r = await git(["diff", "--quiet"], { cwd: repo.root, allowFailure: true });
  assert.equal(r.code, 0);
  await repo.write("README.md", "changed\n");
  const dirty = await git(["diff", "--quiet"], { cwd: repo.root, allowFailure: true });
  assert.equal(dirty.code, 1);
});

Deno.test("git() passes stdin and kills a call that outlives its timeout", async () => {
  await using repo = await tempRepo();
  const oid = await gitText(["hash-object", "--stdin"], { cwd: repo.root, stdin: "x\n" });
  assert.equal(oid, "587be6b4c3f93f93c489c0111bba5596147a26cb");
  await assert.rejects(
    () => git(["-c", "alias.nap=!sleep 1", "nap"], { cwd: repo.root, timeoutMs: 150 }),
    (e: unknown) => e instanceof GitError && e.timedOut && /timed out/.test(e.message),
  );
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(() => git(["status"], { cwd: repo.root, signal: controller.signal }));
});

Deno.test("resolveCommit() and splitZ()", async () => {
  await using repo = await tempRepo();
  assert.match((await resolveCommit("main", { cwd: repo.root }))!, /^[0-9a-f]{40}$/);
  assert.equal(await resolveCommit("nope", { cwd: repo.root }), undefined);
  assert.deepEqual(splitZ("a\0b c\0"), ["a", "b c"]);
  assert.deepEqual(splitZ(""), []);
});

// Arguments reach git verbatim: nothing is split, expanded or run by a shell.
const HOSTILE_ARGS = [
  "two words",
  "it's",
  'say "hi"',
  "$HOME",
  "$(touch pwned)",
  "`touch pwned`",
  "a;touch pwned",
  "a && touch pwned",
  "*",
  "line\nbreak",
  "tab\there",
  "back\\slash",
  "ünïcödé ✓",
  "",
];
for (const arg of HOSTILE_ARGS) {
  Deno.test(`git() passes the argument ${JSON.stringify(arg)} verbatim`, async () => {
    await using repo = await tempRepo();
    const r = await git(["-c", `x.y=${arg}`, "config", "--get", "x.y"], {
      cwd: repo.root,
      allowFailure: true,
    });
    assert.equal(r.stdout, arg === "" ? "\n" : `${arg}\n`);
    assert.rejects(() => Deno.stat(`${repo.root}/pwned`));
  });
}

Deno.test("git() is killed when its signal aborts mid-call, and refuses to start once aborted", async () => {
  await using repo = await tempRepo();
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  // (git is killed; its alias's `sleep` holds the pipe until it ends, as with Deno.Command.)
  await assert.rejects(
    () => git(["-c", "alias.nap=!sleep 1", "nap"], { cwd: repo.root, signal: controller.signal }),
    (e: unknown) => e instanceof GitError && !e.timedOut,
  );
  await assert.rejects(
    () => git(["status"], { cwd: repo.root, signal: controller.signal }),
    (e: unknown) => e instanceof GitError && /aborted/.test(e.message),
  );
});

Deno.test("git() in a missing directory is a GitError naming it; env and byte stdin pass through", async () => {
  await using repo = await tempRepo();
  await assert.rejects(
    () => git(["status"], { cwd: `${repo.root}/nope` }),
    (e: unknown) => e instanceof GitError && e.code === 127 && e.message.includes("/nope"),
  );
  const ident = await gitText(["var", "GIT_AUTHOR_IDENT"], {
    cwd: repo.root,
    env: { GIT_AUTHOR_NAME: "Ada Lovelace", GIT_AUTHOR_EMAIL: "ada@example.org" },
  });
  assert.match(ident, /^Ada Lovelace <ada@example\.org> /);
  const bytes = new Uint8Array([0, 1, 2, 255, 10]);
  const oid = await gitText(["hash-object", "-w", "--stdin"], { cwd: repo.root, stdin: bytes });
  const raw = await git(["cat-file", "blob", oid], { cwd: repo.root });
  assert.deepEqual(raw.bytes, bytes, "stdout bytes are kept verbatim");
});
