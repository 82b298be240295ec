/** Shared test fixtures: journals built by the real encoder, temporary workspaces. */
import { encodeRow, type JournalEvent, type JournalRow } from "../lib/journal/row.ts";
import { verifyJournalText } from "../lib/journal/verify.ts";
import { ZERO_HASH } from "../lib/journal/hash.ts";
import type { RowSink } from "../lib/journal/incremental.ts";
import { join } from "node:path";

/**
 * The golden run directory written by an independent writer (a copy of
 * `../shared/examples/run-golden`, checked against it by golden_fixture_test.ts when present).
 */
export const GOLDEN_DIR = new URL("./fixtures/run-golden/", import.meta.url).pathname;

/** The shared original of the golden run, beside the repository (absent in a bare clone). */
export const SHARED_GOLDEN_DIR =
  new URL("../../shared/examples/run-golden/", import.meta.url).pathname;

/** Journal lines (no trailing newline) for `events`, with a fixed clock. */
export function journalLines(events: JournalEvent[]): string[] {
  let prev = ZERO_HASH;
  return events.map((event, seq) => {
    const { line, hash } = encodeRow(event, {
      prev,
      seq,
      ts: `2026-11-21T10:00:${String(seq % 60).padStart(2, "0")}.000Z`,
    });
    prev = hash;
    return line;
  });
}

/** A journal text with a trailing newline. */
export function journalText(events: JournalEvent[]): string {
  return journalLines(events).join("\n") + "\n";
}

/** A small run: start, two claims, a diff, a completion. */
export function sampleEvents(runId = "r1"): JournalEvent[] {
  return [
    { type: "run_started", data: { run_id: runId, plan: "sample" } },
    {
      type: "task_claimed",
      data: { task_id: "t1", session_id: "s1", title: "First", role: "backend" },
    },
    {
      type: "task_claimed",
      data: { task_id: "t2", session_id: "s2", title: "Second", role: "docs" },
    },
    {
      type: "task_diff_captured",
      data: { task_id: "t1", sha256: "sha256:" + "a".repeat(64), added: 1, removed: 0, files: 1 },
    },
    { type: "task_completed", data: { task_id: "t1" } },
  ];
}

/** A temporary directory removed on dispose (`await using`). */
export async function tempDir(
  prefix = "service-test-",
  parent?: string,
): Promise<AsyncDisposable & { path: string }> {
  const path = await Deno.makeTempDir({ prefix, dir: parent });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * A temporary workspace holding a copy of the golden run as `.sdd/runs/golden`, made in `parent`
 * (default the system's temporary directory; a small tmpfs in the full-disk tests).
 */
export async function goldenWorkspace(parent?: string): Promise<
  AsyncDisposable & { path: string; runDir: string }
> {
  const dir = await tempDir("service-test-", parent);
  const runDir = join(dir.path, ".sdd", "runs", "golden");
  await Deno.mkdir(join(runDir, "review", "diffs"), { recursive: true });
  await Deno.copyFile(join(GOLDEN_DIR, "journal.jsonl"), join(runDir, "journal.jsonl"));
  await Deno.copyFile(
    join(GOLDEN_DIR, "review/diffs/t-parser.diff"),
    join(runDir, "review/diffs/t-parser.diff"),
  );
  return Object.assign(dir, { runDir });
}

/** `cli.ts` of this checkout. */
export const CLI = new URL("../cli.ts", import.meta.url).pathname;

/** Options of {@link runDeno}. */
export interface RunDenoOptions {
  cwd?: string;
  /** Extra environment (NO_COLOR and RUST_BACKTRACE=0 are always set). */
  env?: Record<string, string>;
  /** Start from an empty environment (only PATH and HOME are kept). */
  clearEnv?: boolean;
}

/** Run `deno <args>` to completion; the exit code and stdout+stderr as text. */
export async function runDeno(
  args: string[],
  options: RunDenoOptions = {},
): Promise<{ code: number; text: string }> {
  const base: Record<string, string> = options.clearEnv
    ? { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" }
    : {};
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.cwd,
    clearEnv: options.clearEnv,
    env: { ...base, NO_COLOR: "1", RUST_BACKTRACE: "0", ...options.env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
  };
}

/**
 * Deterministic random journal events over every type the board reads (and one it does not),
 * with non-ASCII titles, optional notes and roles, over `tasks` task ids.
 */
export function randomEvents(seed: number, n: number, tasks = 8): JournalEvent[] {
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(items: T[]) => items[Math.floor(rand() * items.length)];
  const types = [
    "task_claimed",
    "task_verification_failed",
    "task_retried",
    "task_completed",
    "task_merged",
    "task_diff_captured",
    "task_review_decision",
    "run_started",
    "run_completed",
    "agent_note",
  ];
  return Array.from({ length: n }, () => {
    const type = pick(types);
    const data: Record<string, unknown> = {
      task_id: `t${Math.floor(rand() * tasks)}`,
      run_id: "r",
    };
    if (rand() < 0.4) data.title = `Tâche ${Math.floor(rand() * 9)} 🚀`;
    if (rand() < 0.4) data.role = pick(["qa", "docs"]);
    if (type === "task_verification_failed") {
      data.signals = [{ kind: "path_exists", detail: `d${Math.floor(rand() * 9)}` }];
    }
    if (type === "task_diff_captured") {
      Object.assign(data, {
        sha256: `sha256:${Math.floor(rand() * 9)}`,
        added: 3,
        removed: 1,
        files: 2,
      });
    }
    if (type === "task_review_decision") {
      Object.assign(data, {
        decision: pick(["approve", "request_changes", "merge"]),
        principal: "p",
      });
      if (rand() < 0.5) data.note = "n";
    }
    return { type, data } as JournalEvent;
  });
}

/** A serving CLI process (`serve`, `gui serve`), ended with SIGTERM on dispose. */
export interface ServingProcess extends AsyncDisposable {
  url: string;
  child: Deno.ChildProcess;
}

/** Start `deno run -A <args>` and wait for its "listening on <url>" line. */
export async function startServing(
  args: string[],
  env: Record<string, string> = {},
): Promise<ServingProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  try {
    while (!/listening on (\S+)/.test(seen)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${args.join(" ")} exited before listening: ${seen}`);
      seen += value;
    }
  } catch (e) {
    child.kill("SIGTERM");
    await child.status;
    throw e;
  } finally {
    await reader.cancel();
  }
  return {
    url: /listening on (\S+)/.exec(seen)![1],
    child,
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/**
 * Edit row `seq` of a journal file with `edit` and recompute every hash from there on: the chain
 * recomputes again, as a forger with write access would leave it.
 */
export async function rehashJournal(
  journal: string,
  seq: number,
  edit: (row: JournalRow) => void,
): Promise<void> {
  const rows: JournalRow[] = (await Deno.readTextFile(journal)).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  edit(rows[seq]);
  let prev = ZERO_HASH;
  const lines = rows.map((r) => {
    const { line, hash } = encodeRow({ type: r.type, data: r.data }, {
      prev,
      seq: r.seq,
      ts: r.ts,
    });
    prev = hash;
    return line;
  });
  const text = lines.join("\n") + "\n";
  if (!verifyJournalText(text).verified) {
    throw new Error("the re-hashed journal does not recompute");
  }
  await Deno.writeTextFile(journal, text);
}

/** A journal view's sink that counts the rows it was fed, to prove which work a read did. */
export function countingSink(): RowSink<{ n: number }> & { fed: number } {
  const sink = {
    fed: 0,
    init: () => ({ n: 0 }),
    apply: (s: { n: number }) => {
      s.n++;
      sink.fed++;
    },
    clone: (s: { n: number }) => ({ ...s }),
  };
  return sink;
}
