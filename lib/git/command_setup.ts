/**
 * The part of a repository's own git setup that makes git run a command — its hooks and the
 * configuration keys that name a program — read before a run and after it, so the run can say
 * what changed meanwhile. An agent run as a host process can write your `.git/config` and hooks
 * (docs/security.md): the service's git never runs them, but your own `git commit` would. Nothing
 * here runs or follows what it reads: hooks are hashed, the configuration file is read by git
 * itself (`--file`, `--no-includes`: that file alone).
 */
import { join, resolve } from "node:path";
import { git } from "./git.ts";
import { sha256Hex } from "../journal/hash.ts";
import { readPlainFile } from "./plain_file.ts";

/** A repository's command-running setup: hook (path) → its kind and hash; key → value(s). */
export interface CommandSetup {
  hooks: Record<string, string>;
  config: Record<string, string>;
}

/**
 * Configuration keys with which git runs a program (or takes its configuration from elsewhere):
 * git-config(1)'s hooks path, fsmonitor, pagers and editors, ssh and askpass commands, filter,
 * diff and merge drivers, credential helpers, aliases (`!…` runs a shell), includes, and the
 * programs of remotes, signing and the sequencer.
 */
const RUNS_A_COMMAND = new RegExp(
  "^(core\\.(hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy)" +
    "|filter\\..+\\.(clean|smudge|process)|diff\\..+\\.(textconv|command)|diff\\.external" +
    "|merge\\..+\\.driver|credential\\.(.+\\.)?helper|alias\\..+|include(if\\..+)?\\.path" +
    "|remote\\..+\\.(uploadpack|receivepack|proxy)|gpg(\\..+)?\\.program|sequence\\.editor" +
    "|(pager|man|web)\\..+(\\.cmd|\\.path)?|uploadpack\\.packobjectshook)$",
  "i",
);

/** Hook files read at most (a larger one is recorded by why it was not read). */
const MAX_HOOK_BYTES = 1 << 20;

/** The command-running setup of the repository at `root`; undefined when it cannot be read. */
export async function readCommandSetup(root: string): Promise<CommandSetup | undefined> {
  const common = await git(["rev-parse", "--git-common-dir"], { cwd: root, allowFailure: true });
  if (common.code !== 0) return undefined;
  const dir = resolve(root, common.stdout.trim());
  const config: Record<string, string> = {};
  for (const file of ["config", "config.worktree"]) {
    const listed = await git(
      ["config", "--file", join(dir, file), "--no-includes", "-z", "--list"],
      { cwd: root, allowFailure: true },
    );
    if (listed.code !== 0) continue; // no such file
    for (const entry of listed.stdout.split("\0")) {
      const at = entry.indexOf("\n");
      const key = (at < 0 ? entry : entry.slice(0, at)).toLowerCase();
      if (!RUNS_A_COMMAND.test(key)) continue;
      const value = at < 0 ? "" : entry.slice(at + 1);
      const name = file === "config" ? key : `${key} (config.worktree)`;
      config[name] = name in config ? `${config[name]}\n${value}` : value;
    }
  }
  const hooksPath = config["core.hookspath"]?.split("\n").pop();
  const hooks = {
    ...await hookFiles(join(dir, "hooks"), ".git/hooks"),
    ...(hooksPath ? await hookFiles(resolve(root, hooksPath), hooksPath) : {}),
  };
  return { hooks, config };
}

/** The hooks in `dir` (not git's `*.sample` files), by `label/name`: a hash, or what it is. */
async function hookFiles(dir: string, label: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.name.endsWith(".sample")) continue;
      const path = join(dir, entry.name);
      const name = `${label.replace(/\/$/, "")}/${entry.name}`;
      // Never blocks on a FIFO nor follows a link (lib/git/plain_file.ts).
      const file = readPlainFile(path, { maxBytes: MAX_HOOK_BYTES, hardLinks: true });
      found[name] = file.kind === "plain"
        ? sha256Hex(file.bytes)
        : entry.isSymlink
        ? `link to ${await Deno.readLink(path)}`
        : file.kind === "other"
        ? file.why
        : "gone";
    }
  } catch {
    // No hooks directory: nothing to list.
  }
  return found;
}

/** What changed between `before` and `after`, one line each, in a stable order (pure). */
export function setupChanges(before: CommandSetup, after: CommandSetup): string[] {
  const lines: string[] = [];
  const compare = (kind: string, was: Record<string, string>, now: Record<string, string>) => {
    for (const name of [...new Set([...Object.keys(was), ...Object.keys(now)])].sort()) {
      if (!(name in was)) lines.push(`new ${kind} ${name}${valueOf(kind, now[name])}`);
      else if (!(name in now)) lines.push(`${kind} ${name} removed`);
      else if (was[name] !== now[name]) {
        lines.push(`${kind} ${name} changed${valueOf(kind, now[name])}`);
      }
    }
  };
  compare("hook", before.hooks, after.hooks);
  compare("config", before.config, after.config);
  return lines;
}

function valueOf(kind: string, value: string): string {
  return kind === "config" ? ` = ${value.replaceAll("\n", " | ")}` : "";
}
