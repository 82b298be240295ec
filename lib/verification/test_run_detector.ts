/**
 * The test-run detector (DESIGN.md §10, `tests_run`): did the agent's own session log show a test
 * suite running? Pure: it takes the log's events (its adapter read the log,
 * lib/agents/session_events.ts) and the prompt, whose echo proves nothing, and returns every runner
 * summary it found.
 *
 * Output is read from plain lines (any CLI that prints what it runs) and from the output of tools
 * the agent ran (Claude Code's Bash `tool_result` blocks, Codex's `command_execution` items,
 * Gemini's `tool_result` lines) — except tools that only read or write files (Read, Grep,
 * read_file, …), whose output is a file's content. Nothing else counts: the model's prose, the
 * prompt, the final result text and tools' inputs are other events, and a model saying "all 3
 * tests passed" is not a test run.
 *
 * A summary counts only in the exact shape its runner prints (anchored at the start of a line,
 * colour codes removed) and only when it reports at least one test; a failing run is still a run.
 * A summary line that also occurs in the prompt is discounted (an echoed prompt is not output).
 */
import type { OutputSource as ToolSource, SessionEvent } from "../agents/session_events.ts";

/** Where a summary was read from: plain lines, or a tool's output. */
export type OutputSource = "plain" | ToolSource;

/** One runner summary found in the log. */
export interface TestRunSighting {
  runner: string;
  /** `passed` or `failed` as the summary says. */
  outcome: "passed" | "failed";
  /** The summary line, colour codes removed. */
  line: string;
  /** 1-based line of the log that holds it. */
  logLine: number;
  source: OutputSource;
}

/** What the detector found. */
export interface TestRunReport {
  tests_run: boolean;
  sightings: TestRunSighting[];
}

/** Options of {@link detectTestRuns}. */
export interface DetectOptions {
  /** The prompt the agent was given: summary lines it contains are not evidence. */
  prompt?: string;
  /** Stop after this many sightings (default 20). */
  limit?: number;
}

/** A block of output lines from one source. */
interface Segment {
  source: OutputSource;
  logLine: number;
  lines: string[];
}

// deno-lint-ignore no-control-regex -- colour codes are exactly what must go
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g;

/** Tools whose output is a file's content or a search result, not a command's. */
const READING_TOOLS = new Set([
  "read",
  "grep",
  "glob",
  "ls",
  "webfetch",
  "websearch",
  "notebookread",
  "todowrite",
  "edit",
  "multiedit",
  "write",
  "read_file",
  "read_many_files",
  "search_file_content",
  "glob_tool",
  "list_directory",
  "web_fetch",
  "google_web_search",
  "write_file",
  "replace",
]);

/**
 * Words without which no runner summary can be in a text (a superset of the rules below): a
 * tool's output without any of them is not split into lines at all, which keeps a long session
 * log fast.
 */
const SUMMARY_WORDS =
  /passed|failed|passing|\d+ errors?\b|Ran \d|\bok\b|FAIL|test result|Summary \[|\d+ examples?\b|OK \(|Tests|tests|Task :|# pass|total: \d|Total:|\d+ specs?,|\d+ pass\b|failures?\b/;

/**
 * The output segments of a log: runs of consecutive plain lines, and each tool's output except
 * that of tools that read or write files (named by their calls).
 */
function segments(events: readonly SessionEvent[]): Segment[] {
  const names = new Map<string, string>();
  for (const e of events) {
    if (e.kind === "tool_call" && e.id !== undefined && e.name !== undefined) {
      names.set(e.id, e.name);
    }
  }
  const out: Segment[] = [];
  let plain: Segment | undefined;
  let lastPlain = -1;
  for (const e of events) {
    if (e.kind === "text") {
      if (!plain || e.line !== lastPlain + 1) {
        plain = { source: "plain", logLine: e.line, lines: [] };
        out.push(plain);
      }
      plain.lines.push(e.raw.replace(/\r$/, ""));
      lastPlain = e.line;
    } else if (e.kind === "tool_output" && SUMMARY_WORDS.test(e.text)) {
      const name = e.id === undefined ? undefined : names.get(e.id);
      if (name !== undefined && READING_TOOLS.has(name.toLowerCase())) continue;
      out.push({ source: e.source, logLine: e.line, lines: e.text.split(/\r?\n/) });
    }
  }
  return out;
}

/** A rule over one line; `next` gives the following lines of the same segment. */
interface Rule {
  runner: string;
  match: (line: string, next: (n: number) => string[]) => "passed" | "failed" | undefined;
}

const n = (s: string | undefined) => Number(s ?? 0);

/** Outcome from counts of failed and total (or passed) tests; undefined when no test ran. */
function counted(failed: number, ran: number): "passed" | "failed" | undefined {
  if (ran <= 0 && failed <= 0) return undefined;
  return failed > 0 ? "failed" : "passed";
}

function laterLine(lines: string[], re: RegExp): RegExpMatchArray | undefined {
  for (const l of lines) {
    const m = l.match(re);
    if (m) return m;
  }
  return undefined;
}

const RULES: Rule[] = [
  {
    // ok | 3 passed (2 steps) | 0 failed (12ms)   /   FAILED | 1 passed | 1 failed (13ms)
    runner: "deno test",
    match: (l) => {
      const m = l.match(/^(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed/);
      return m ? counted(n(m[3]), n(m[2]) + n(m[3])) : undefined;
    },
  },
  {
    // TAP: "# tests 2" … "# pass 1" "# fail 1"; spec reporter: "ℹ tests 2" … "ℹ fail 1"
    runner: "node --test",
    match: (l, next) => {
      const m = l.match(/^(#|ℹ) tests (\d+)$/);
      if (!m) return undefined;
      const following = next(8);
      const pass = laterLine(following, new RegExp(`^\\${m[1] === "#" ? "#" : "ℹ"} pass (\\d+)$`));
      const fail = laterLine(following, new RegExp(`^\\${m[1] === "#" ? "#" : "ℹ"} fail (\\d+)$`));
      return pass && fail ? counted(n(fail[1]), n(m[2])) : undefined;
    },
  },
  {
    // tape: "# tests 157" then "# pass  157" (two spaces), "# fail  1" only when one failed
    runner: "tape",
    match: (l, next) => {
      const m = l.match(/^# tests (\d+)$/);
      if (!m) return undefined;
      const following = next(4);
      const pass = laterLine(following, /^# pass\s+(\d+)$/);
      if (!pass) return undefined;
      const fail = laterLine(following, /^# fail\s+(\d+)$/);
      return counted(n(fail?.[1]), n(m[1]));
    },
  },
  {
    // node-tap: # { total: 2, pass: 1, fail: 1 }
    runner: "tap",
    match: (l) => {
      const m = l.match(/^# \{ total: (\d+), pass: \d+(?:, fail: (\d+))?/);
      return m ? counted(n(m[2]), n(m[1])) : undefined;
    },
  },
  {
    //   2 tests passed   /   1 test failed   (a failed run may print both, failed last)
    runner: "ava",
    match: (l, next) => {
      const m = l.match(/^\s*(\d+) tests? (passed|failed)$/);
      if (!m) return undefined;
      if (m[2] === "failed") return counted(n(m[1]), n(m[1]));
      const failed = laterLine(next(3), /^\s*(\d+) tests? failed$/);
      return counted(n(failed?.[1]), n(m[1]) + n(failed?.[1]));
    },
  },
  {
    //   Total:     2 / Passed:    1 / Skipped:   0 / Duration:  0.93ms   (uvu)
    runner: "uvu",
    match: (l, next) => {
      const m = l.match(/^\s*Total:\s+(\d+)$/);
      if (!m) return undefined;
      const following = next(3);
      const passed = laterLine(following, /^\s*Passed:\s+(\d+)$/);
      if (!passed || !laterLine(following, /^\s*Duration:\s+[\d.]+m?s$/)) return undefined;
      const skipped = laterLine(following, /^\s*Skipped:\s+(\d+)$/);
      return counted(n(m[1]) - n(passed[1]) - n(skipped?.[1]), n(m[1]));
    },
  },
  {
    // 2 specs, 1 failure   (jasmine; ", 1 pending spec" may follow)
    runner: "jasmine",
    match: (l) => {
      const m = l.match(/^(\d+) specs?, (\d+) failures?(?:, \d+ pending specs?)?$/);
      return m ? counted(n(m[2]), n(m[1])) : undefined;
    },
  },
  {
    //  6 pass / 0 fail / 6 expect() calls / Ran 6 tests across 3 files. [9.00ms]   (bun test)
    runner: "bun test",
    match: (l, next) => {
      const m = l.match(/^\s*(\d+) pass$/);
      if (!m) return undefined;
      const following = next(4);
      const fail = laterLine(following, /^\s*(\d+) fail$/);
      const ran = laterLine(following, /^Ran (\d+) tests? across \d+ files?\./);
      return fail && ran ? counted(n(fail[1]), n(ran[1])) : undefined;
    },
  },
  {
    // 1 doctest, 3 tests, 0 failures   (ExUnit, mix test)
    runner: "mix test",
    match: (l) => {
      const m = l.match(
        /^((?:\d+ (?:doctests?|propert(?:y|ies)|tests?), )*\d+ (?:doctests?|propert(?:y|ies)|tests?)), (\d+) failures?(?:, .*)?$/,
      );
      if (!m) return undefined;
      const ran = [...m[1].matchAll(/(\d+) /g)].reduce((sum, x) => sum + n(x[1]), 0);
      return counted(n(m[2]), ran);
    },
  },
  {
    // Tests:       1 failed, 2 passed, 3 total
    runner: "jest",
    match: (l) => {
      const m = l.match(/^Tests:\s+((?:\d+ [a-z]+, )*)(\d+) total$/);
      if (!m) return undefined;
      return counted(n(m[1].match(/(\d+) failed/)?.[1]), n(m[2]));
    },
  },
  {
    //       Tests  1 failed | 2 passed (3)
    runner: "vitest",
    match: (l) => {
      const m = l.match(
        /^\s*Tests\s+((?:\d+ (?:passed|failed|skipped|todo)(?: \| )?)+)\s*\((\d+)\)/,
      );
      if (!m) return undefined;
      return counted(n(m[1].match(/(\d+) failed/)?.[1]), n(m[2]));
    },
  },
  {
    //   3 passing (12ms)   [then optionally "  1 failing"]
    runner: "mocha",
    match: (l, next) => {
      const m = l.match(/^\s*(\d+) passing \(\d+(?:ms|s|m)\)$/);
      if (!m) return undefined;
      const failing = laterLine(next(3), /^\s*(\d+) failing$/);
      return counted(n(failing?.[1]), n(m[1]) + n(failing?.[1]));
    },
  },
  {
    // ==== 1 failed, 1 passed in 0.93s ====   /   3 passed in 0.01s   (pytest -q)
    runner: "pytest",
    match: (l) => {
      const m = l.match(
        /^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun)(?:, )?)+) in \d+(?:\.\d+)?s(?: \([\d:.]+\))?\s*=*$/,
      );
      if (!m) return undefined;
      const counts = m[1];
      const failed = n(counts.match(/(\d+) failed/)?.[1]) + n(counts.match(/(\d+) errors?/)?.[1]);
      const ran = failed + n(counts.match(/(\d+) passed/)?.[1]) +
        n(counts.match(/(\d+) x(?:failed|passed)/)?.[1]);
      return counted(failed, ran);
    },
  },
  {
    // Ran 2 tests in 0.001s  …  OK  /  FAILED (failures=1)
    runner: "unittest",
    match: (l, next) => {
      const m = l.match(/^Ran (\d+) tests? in \d+(?:\.\d+)?s$/);
      if (!m) return undefined;
      const verdict = laterLine(next(3), /^(OK|FAILED \((?:failures|errors)=\d+.*\))(?: \(.*\))?$/);
      if (!verdict) return undefined;
      return counted(verdict[1].startsWith("FAILED") ? 1 : 0, n(m[1]));
    },
  },
  {
    // ok  	example.com/pkg	0.012s   /   FAIL	example.com/pkg	0.010s
    runner: "go test",
    match: (l) => {
      const m = l.match(/^(ok|FAIL)\s+\S+\s+(?:\d+\.\d+s|\(cached\))(?:\s+coverage: .*)?$/);
      return m ? (m[1] === "ok" ? "passed" : "failed") : undefined;
    },
  },
  {
    // test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
    runner: "cargo test",
    match: (l) => {
      const m = l.match(/^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed;/);
      return m ? counted(n(m[3]), n(m[2]) + n(m[3])) : undefined;
    },
  },
  {
    //      Summary [   0.012s] 3 tests run: 2 passed, 1 failed, 0 skipped
    runner: "cargo nextest",
    match: (l) => {
      const m = l.match(/^\s*Summary \[\s*[\d.]+s\] (\d+) tests? run: (.*)$/);
      if (!m) return undefined;
      const failed = n(m[2].match(/(\d+) failed/)?.[1]) + n(m[2].match(/(\d+) timed out/)?.[1]);
      return counted(failed, n(m[1]));
    },
  },
  {
    // 3 examples, 1 failure, 1 pending
    runner: "rspec",
    match: (l) => {
      const m = l.match(
        /^(\d+) examples?, (\d+) failures?(?:, \d+ pending)?(?:, \d+ errors? occurred outside of examples)?$/,
      );
      return m ? counted(n(m[2]), n(m[1])) : undefined;
    },
  },
  {
    // OK (3 tests, 5 assertions)   /   Tests: 3, Assertions: 5, Failures: 1.
    runner: "phpunit",
    match: (l) => {
      const ok = l.match(/^OK \((\d+) tests?, \d+ assertions?\)$/);
      if (ok) return counted(0, n(ok[1]));
      const m = l.match(/^Tests: (\d+), Assertions: \d+(.*)\.$/);
      if (!m) return undefined;
      const bad = n(m[2].match(/Failures: (\d+)/)?.[1]) + n(m[2].match(/Errors: (\d+)/)?.[1]);
      return counted(bad, n(m[1]));
    },
  },
  {
    // Passed!  - Failed:     0, Passed:     3, Skipped:     0, Total:     3, Duration: 12 ms - x.dll
    // Test summary: total: 3, failed: 0, succeeded: 3, skipped: 0, duration: 0.5s   (.NET 9)
    runner: "dotnet test",
    match: (l) => {
      const m = l.match(
        /^\s*(?:Passed|Failed)!\s+-\s+Failed:\s+(\d+), Passed:\s+(\d+),.*Total:\s+(\d+)/,
      );
      if (m) return counted(n(m[1]), n(m[3]));
      const s = l.match(/^\s*Test summary: total: (\d+), failed: (\d+),/);
      return s ? counted(n(s[2]), n(s[1])) : undefined;
    },
  },
  {
    // [INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0   (surefire and failsafe)
    runner: "maven surefire",
    match: (l) => {
      const m = l.match(
        /^(?:\[(?:INFO|ERROR|WARNING)\]\s+)?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: \d+/,
      );
      return m ? counted(n(m[2]) + n(m[3]), n(m[1])) : undefined;
    },
  },
  {
    // 3 tests completed, 1 failed   /   > Task :test … BUILD SUCCESSFUL
    runner: "gradle test",
    match: (l, next) => {
      const m = l.match(/^(\d+) tests? completed, (\d+) failed/);
      if (m) return counted(n(m[2]), n(m[1]));
      if (!/^> Task (?::[\w-]+)*:test$/.test(l)) return undefined;
      const build = laterLine(next(400), /^BUILD (SUCCESSFUL|FAILED)\b/);
      return build ? (build[1] === "SUCCESSFUL" ? "passed" : "failed") : undefined;
    },
  },
];

/** Lines of the prompt, trimmed, to recognise an echo. */
function promptLines(prompt: string | undefined): Set<string> {
  const set = new Set<string>();
  for (const l of (prompt ?? "").split("\n")) {
    const t = l.replace(ANSI, "").trim();
    if (t) set.add(t);
  }
  return set;
}

/** The test-runner summaries among a session log's events (pure). */
export function detectTestRuns(
  events: readonly SessionEvent[],
  options: DetectOptions = {},
): TestRunReport {
  const limit = options.limit ?? 20;
  const echo = promptLines(options.prompt);
  const sightings: TestRunSighting[] = [];
  for (const seg of segments(events)) {
    const lines = seg.lines.map((l) => l.replace(ANSI, "").replace(/\s+$/, ""));
    for (let i = 0; i < lines.length && sightings.length < limit; i++) {
      const line = lines[i];
      // Every summary holds a digit, except gradle's task line.
      if (line.length > 400 || (!/\d/.test(line) && !line.startsWith("> Task"))) continue;
      if (echo.has(line.trim())) continue;
      const next = (count: number) => lines.slice(i + 1, i + 1 + count);
      for (const rule of RULES) {
        const outcome = rule.match(line, next);
        if (!outcome) continue;
        sightings.push({
          runner: rule.runner,
          outcome,
          line: line.trim(),
          logLine: seg.logLine + (seg.source === "plain" ? i : 0),
          source: seg.source,
        });
        break;
      }
    }
  }
  return { tests_run: sightings.length > 0, sightings };
}
